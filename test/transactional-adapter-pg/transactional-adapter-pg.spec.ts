import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { ChildApp } from '../support/child-app.js';
import { postgresSchema } from '../support/servers.js';

// The Nest application runs in a child process (see child-app.ts for why); its service is
// support/nest-cls.fixture.mjs: @Transactional methods writing through TransactionHost#tx and,
// as a ddd-kit part does, through the ambient-transaction protocol.
const FIXTURE = new URL('./support/nest-cls.fixture.mjs', import.meta.url);

describe('TransactionalAdapterPg with @nestjs-cls/transactional', () => {
  let schema: Awaited<ReturnType<typeof postgresSchema>>;
  let app: ChildApp;

  beforeAll(async () => {
    schema = await postgresSchema('tx_adapter');
    const admin = new pg.Client({ connectionString: schema.url });
    await admin.connect();
    await admin.query('CREATE TABLE notes (id text PRIMARY KEY, body text NOT NULL)');
    await admin.end();
    app = await ChildApp.start(FIXTURE, { FIXTURE_DATABASE_URL: schema.url });
  });
  beforeEach(async () => {
    await app.call('reset');
  });
  afterAll(async () => {
    if (app) expect(await app.stop()).toBe(0);
    await schema?.drop();
  });

  it('@Transactional commits what the method wrote, through txHost.tx and through the ddd-kit protocol alike', async () => {
    await app.call('create', ['h1', 'p1'], false);
    expect(await app.call('stored')).toEqual(['h1', 'p1']);
    expect(await app.call('idle')).toBe(true);
  });

  it('@Transactional rolls back both when the method throws, and the error reaches the caller', async () => {
    await expect(app.call('create', ['h2', 'p2'], true)).rejects.toThrow('use case failed');
    expect(await app.call('stored')).toEqual([]);
    expect(await app.call('idle')).toBe(true);
  });

  it("txHost.tx is the transaction's client inside, the pool outside; the protocol agrees", async () => {
    expect(await app.call('txKinds')).toEqual({
      outside: 'pool',
      inside: 'client',
      protocolAgrees: true,
      protocolAfter: 'pool',
    });
  });

  it('transaction options reach BEGIN: withTransaction({ isolationLevel, readOnly }), and defaultTxOptions', async () => {
    expect(await app.call('transactionSettings', { isolationLevel: 'REPEATABLE READ', readOnly: true })).toEqual({
      iso: 'repeatable read',
      ro: 'on',
    });
    expect(await app.call('transactionSettings', {})).toEqual({ iso: 'read committed', ro: 'off' });
    expect(await app.call('defaultIsolation')).toEqual(['serializable', 'read committed']);
    await expect(
      app.call('transactionSettings', { isolationLevel: 'READ COMMITTED; DROP TABLE notes' }),
    ).rejects.toThrow(/isolationLevel must be one of/);
  });

  it('REQUIRED (default) joins: an inner @Transactional rolls back with the outer one', async () => {
    await expect(app.call('requiredJoins')).rejects.toThrow('outer failed');
    expect(await app.call('stored')).toEqual([]);
  });

  it('REQUIRES_NEW commits on a connection of its own, whatever the outer transaction does', async () => {
    await expect(app.call('requiresNew')).rejects.toThrow('outer failed');
    expect(await app.call('stored')).toEqual(['p-new']);
  });

  it('NESTED runs in a savepoint: a failed nested call is undone, the outer transaction goes on and commits', async () => {
    await app.call('nested');
    expect(await app.call('stored')).toEqual(['p-after', 'p-before', 'p-kept']);
  });

  it('NOT_SUPPORTED suspends the transaction for the ddd-kit parts too: they autocommit until the method returns', async () => {
    expect(await app.call('notSupported')).toBe('pool');
    // The outer transaction rolled back; only what ran without a transaction stayed.
    expect(await app.call('stored')).toEqual(['p-autocommit']);
  });

  it("a child call the method did not await is refused after the commit, never run in the next request's transaction (one-connection pool)", async () => {
    // Before: the late INSERT ran on the pooled connection, inside the next transaction, and committed with it.
    expect(await app.call('lateChild')).toEqual({ child: 'PG_TRANSACTION_ENDED', sameTransaction: true });
    expect(await app.call('stored')).toEqual(['next', 'parent']);
    expect(await app.call('idle')).toBe(true);
  });

  it('two concurrent transactions are isolated from each other and both commit', async () => {
    expect(await app.call('concurrent')).toEqual([['p-a'], ['p-b']]);
    expect(await app.call('stored')).toEqual(['p-a', 'p-b']);
  });

  it('a poolToken that does not resolve to a pool fails the bootstrap, naming the token', async () => {
    await expect(
      ChildApp.start(FIXTURE, { FIXTURE_DATABASE_URL: schema.url, FIXTURE_MODE: 'wrong-token' }),
    ).rejects.toThrow(/NOT_A_POOL[\s\S]*needs a pg\.Pool/);
  });
});
