import { describe, expect, it } from '@jest/globals';
import { PrepareKeyArgumentError } from '../../errors.js';
import { PrepareKey } from '../../prepare-key.js';
import { PreparedValue, TTL_FOREVER, toTtlAt } from '../../prepared-value.js';
import { primitivesOf } from '../../prepare-key.primitives.js';
import type { ContractContext } from './contract-context.js';

/** Cases of describePrepareKeyContract (see prepare-key.contract.ts). */
export function describeUsingPrepareCases(context: ContractContext): void {
  const { fresh, now } = context;
  describe('usingPrepare', () => {
    it('passes true to then, resolves what then resolves, and keeps the reservation', async () => {
      const pk = fresh();
      const seen: boolean[] = [];
      const result = await pk.usingPrepare('alice', { owner: 'u1' }, async (prepared) => {
        seen.push(prepared);
        return 'registered';
      });
      expect(result).toBe('registered');
      expect(seen).toEqual([true]);
      expect(await pk.get('alice')).toEqual({ owner: 'u1' });
      expect(await pk.prepare('alice', { owner: 'u2' })).toBe(false);
    });

    it('passes false to then when the key is held, and resolves what then resolves', async () => {
      const pk = fresh();
      await pk.prepare('alice', { owner: 'u1' });
      const seen: boolean[] = [];
      const result = await pk.usingPrepare('alice', { owner: 'u2' }, (prepared) => {
        seen.push(prepared);
        return prepared ? 'mine' : 'taken';
      });
      expect(result).toBe('taken');
      expect(seen).toEqual([false]);
      expect(await pk.get('alice')).toEqual({ owner: 'u1' });
    });

    it('rolls back when prepared and then rejects, and propagates the original error', async () => {
      const pk = fresh();
      const original = new Error('append failed');
      await expect(
        pk.usingPrepare('alice', { owner: 'u1' }, async () => {
          throw original;
        }),
      ).rejects.toBe(original);
      expect(await pk.getValue('alice')).toBeUndefined();
      expect(await pk.prepare('alice', { owner: 'u2' })).toBe(true);
    });

    it('rolls back when prepared and then throws synchronously, with a TTL value too', async () => {
      const pk = fresh();
      const original = new Error('invalid command');
      await expect(
        pk.usingPrepare('alice', toTtlAt({ owner: 'u1' }, now() + 60_000), () => {
          throw original;
        }),
      ).rejects.toBe(original);
      expect(await pk.getValue('alice')).toBeUndefined();
    });

    it('does not roll back when not prepared and then throws: the holder keeps the key', async () => {
      const pk = fresh();
      await pk.prepare('alice', { owner: 'u1' });
      const original = new Error('username is already reserved');
      await expect(
        pk.usingPrepare('alice', { owner: 'u1' }, (prepared) => {
          if (!prepared) throw original;
          return 'unexpected';
        }),
      ).rejects.toBe(original);
      expect(await pk.getValue('alice')).toEqual(new PreparedValue({ owner: 'u1' }, TTL_FOREVER));
    });

    it("rolls back conditionally: a record another owner took meanwhile survives then's failure", async () => {
      const pk = fresh();
      const original = new Error('late failure');
      await expect(
        pk.usingPrepare('alice', { owner: 'u1' }, async () => {
          await pk.rollback('alice');
          await pk.prepare('alice', { owner: 'u2' });
          throw original;
        }),
      ).rejects.toBe(original);
      expect(await pk.get('alice')).toEqual({ owner: 'u2' });
    });

    it('propagates the rollback error when the rollback itself fails', async () => {
      const inner = fresh();
      const rollbackFailure = new Error('backend unavailable during rollback');
      const pk = new RollbackFailingPrepareKey(inner, rollbackFailure);
      await expect(
        pk.usingPrepare('alice', { owner: 'u1' }, async () => {
          throw new Error('append failed');
        }),
      ).rejects.toBe(rollbackFailure);
      expect(pk.rollbackAttempts).toBe(1);
      // The release failed, so the reservation is still there.
      expect(await inner.get('alice')).toEqual({ owner: 'u1' });

      // Not prepared: no rollback is attempted, the original error propagates.
      const original = new Error('taken');
      await expect(
        pk.usingPrepare('alice', { owner: 'u2' }, () => {
          throw original;
        }),
      ).rejects.toBe(original);
      expect(pk.rollbackAttempts).toBe(1);
    });

    it('does not call then when prepare rejects on bad input', async () => {
      const pk = fresh();
      let called = false;
      await expect(
        pk.usingPrepare('', { owner: 'u1' }, () => {
          called = true;
        }),
      ).rejects.toBeInstanceOf(PrepareKeyArgumentError);
      expect(called).toBe(false);
    });
  });
}

/**
 * Forwards every primitive to a real backend key, except that `doRollback` fails: the only
 * portable way to make a backend's rollback fail on demand.
 */
class RollbackFailingPrepareKey<V> extends PrepareKey<V> {
  readonly name: string;
  rollbackAttempts = 0;

  constructor(
    private readonly inner: PrepareKey<V>,
    private readonly failure: Error,
  ) {
    super();
    this.name = inner.name;
  }

  protected override now(): number {
    return primitivesOf(this.inner).now();
  }

  protected doPrepare(key: string, value: string, ttlAt: number, op: string) {
    return primitivesOf(this.inner).doPrepare(key, value, ttlAt, op);
  }

  protected doGetValue(key: string) {
    return primitivesOf(this.inner).doGetValue(key);
  }

  protected async doRollback(): Promise<boolean> {
    this.rollbackAttempts++;
    throw this.failure;
  }

  protected doReprepare(key: string, value: string, ttlAt: number, op: string, expected?: string) {
    return primitivesOf(this.inner).doReprepare(key, value, ttlAt, op, expected);
  }

  protected doListPage(cursor: string | undefined, pageSize: number) {
    return primitivesOf(this.inner).doListPage(cursor, pageSize);
  }
}
