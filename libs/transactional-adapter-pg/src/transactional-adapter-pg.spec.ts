// The adapter in a Nest application on a real PostgreSQL: test/transactional-adapter-pg/transactional-adapter-pg.spec.ts.
import { describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { TransactionalAdapterPg } from './transactional-adapter-pg.js';

describe('TransactionalAdapterPg options', () => {
  it('needs exactly one of pool and poolToken, a real pool, and valid default options', async () => {
    const pool = new pg.Pool();
    try {
      expect(() => new TransactionalAdapterPg({})).toThrow(/exactly one/);
      expect(() => new TransactionalAdapterPg({ pool, poolToken: 'PG_POOL' })).toThrow(/exactly one/);
      expect(() => new TransactionalAdapterPg({ pool: {} as pg.Pool })).toThrow(/pg\.Pool/);
      expect(
        () => new TransactionalAdapterPg({ pool, defaultTxOptions: { isolationLevel: 'CHAOS' as never } }),
      ).toThrow(/isolationLevel/);
      expect(() => new TransactionalAdapterPg({ pool, defaultTxOptions: { readOnly: 'yes' as never } })).toThrow(
        /readOnly/,
      );
      const adapter = new TransactionalAdapterPg({ poolToken: 'PG_POOL' });
      expect(adapter.connectionToken).toBe('PG_POOL');
      expect(() => adapter.optionsFactory({} as pg.Pool)).toThrow(/PG_POOL[\s\S]*pg\.Pool/);
      expect(adapter.optionsFactory(pool).getFallbackInstance()).toBe(pool);
    } finally {
      await pool.end();
    }
  });
});
