// The outbox without a table (PostgresWalOutboxStore) on a PostgreSQL with wal_level = logical:
// the store contract, the relay end to end, one consumer per slot, and the start-up check.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { Injectable } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { DataSyncEvent, getRepositoryToken, OnDataSync, RepositoryModule, type IRepository } from '@ddd-kit/repository';
import { OutboxRelay } from '@ddd-kit/repository/outbox';
import { PostgresWalOutboxStore, type PostgresWalOutboxStoreOptions } from '@ddd-kit/repository/postgres-wal';
import { describeOutboxStoreContract } from '@ddd-kit/repository/testing';
import { runInTransaction } from '@ddd-kit/transactional-adapter-pg';
import { provideLogicalPostgres, startPostgresCluster } from '../support/server-provider.js';
import { waitFor } from '../support/wait.js';
import { Counter, CounterPostgresRepository } from './support/counter.aggregate.js';
import { observedPool } from './support/postgres.support.js';

let server: Awaited<ReturnType<typeof provideLogicalPostgres>>;
let pool: pg.Pool;
const schema = `wal_${randomUUID().slice(0, 8)}`;
/** Every slot a case made: dropped at the end (the server keeps slots across sessions). */
const slots = new Set<string>();
let n = 0;

beforeAll(async () => {
  server = await provideLogicalPostgres();
  const admin = new pg.Client({ connectionString: server.url });
  await admin.connect();
  await admin.query(`CREATE SCHEMA ${schema}`);
  await admin.end();
  const url = new URL(server.url);
  url.searchParams.set('options', `-c search_path=${schema}`);
  pool = new pg.Pool({ connectionString: url.toString(), max: 20 });
}, 120_000);

afterAll(async () => {
  if (pool !== undefined) {
    // A slot still read by a store a failed case left running: its session ends with the slot.
    await pool.query(
      'SELECT pg_terminate_backend(active_pid) FROM pg_replication_slots WHERE slot_name = ANY($1) AND active_pid IS NOT NULL',
      [[...slots]],
    );
    await waitFor(
      'the slots to be free',
      async () =>
        (await pool.query('SELECT 1 FROM pg_replication_slots WHERE slot_name = ANY($1) AND active', [[...slots]]))
          .rowCount === 0,
    );
    await pool.query('SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = ANY($1)', [
      [...slots],
    ]);
    await pool.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await pool.end();
  }
  await server?.stop();
});

/** A store on a slot, prefix and dead-letter table of its own (or those given). */
function walStore(name: string, options: Partial<PostgresWalOutboxStoreOptions> = {}): PostgresWalOutboxStore {
  const slot = options.slot ?? `${schema}_${name}`;
  slots.add(slot);
  return new PostgresWalOutboxStore({
    pool,
    slot,
    prefix: `${schema}.${name}`,
    deadLetterTable: `dead_${name}`,
    retry: { initialMs: 20, maxMs: 200 },
    ...options,
  });
}

/** `repository` whose every call also waits for the store to have read what it committed (the slot is read asynchronously). */
function readBack(
  repository: IRepository<string, Counter>,
  store: PostgresWalOutboxStore,
): IRepository<string, Counter> {
  return new Proxy(repository, {
    get(target, key) {
      const value = Reflect.get(target, key, target);
      if (typeof value !== 'function') return value;
      return async (...args: unknown[]) => {
        try {
          return await value.apply(target, args);
        } finally {
          await store.sync();
        }
      };
    },
  });
}

// One slot for the contract's cases: each case a store with a prefix of its own (what a case
// left unfinished is read again by the next one, and ignored: not its prefix).
describeOutboxStoreContract('PostgresWalOutboxStore', async () => {
  const i = ++n;
  const store = walStore(`contract_${i}`, { slot: `${schema}_contract` });
  await store.start();
  await store.whenHolding();
  const repository = new CounterPostgresRepository({ aggregate: Counter, pool, table: `counters_${i}`, outbox: store });
  return { store, repository: readBack(repository, store), close: () => store.stop() };
});

describe('PostgresWalOutboxStore: the write', () => {
  it("emits the events in the write's own statement, only when the write matched, and nothing for a rolled-back transaction", async () => {
    const observed = observedPool(pool);
    const store = walStore('write', { pool: observed.pool });
    const repository = new CounterPostgresRepository({
      aggregate: Counter,
      pool: observed.pool,
      table: 'counters_write',
      outbox: store,
    });
    await store.start();
    try {
      await store.whenHolding();
      const counter = new Counter('w', 'written');
      await repository.insert(counter);
      const stale = (await repository.findById('w'))!;
      counter.increment();
      observed.sent.length = 0;
      await repository.update(counter);
      expect(observed.sent.map((s) => s.text)).toEqual([
        expect.stringMatching(
          /^WITH w AS \(UPDATE "counters_write" .* RETURNING 1\) SELECT pg_logical_emit_message\(true, \$\d+::text, \$\d+::text\) FROM w LIMIT 1$/s,
        ),
      ]);
      // An optimistic-lock miss and a rollback emit nothing.
      stale.increment();
      await expect(repository.update(stale)).rejects.toThrow();
      await expect(
        runInTransaction(observed.pool, async () => {
          await repository.insert(new Counter('undone', 'undone'));
          throw new Error('the use case fails after the write');
        }),
      ).rejects.toThrow('the use case fails');
      await store.sync();
      const claimed = await store.claim({ owner: 'reader', limit: 10, leaseMs: 60_000, now: Date.now() });
      expect(claimed.flatMap((c) => c.events.map((r) => `${String(r.aggregateId)}@${r.version}`))).toEqual([
        'w@1',
        'w@2',
      ]);
    } finally {
      await store.dropSlot();
    }
  });
});

describe('PostgresWalOutboxStore: relayed', () => {
  it('delivers the events of concurrent writers in order per aggregate, and confirms the slot once delivered', async () => {
    const store = walStore('relay');
    const repository = new CounterPostgresRepository({
      aggregate: Counter,
      pool,
      table: 'counters_relay',
      outbox: store,
    });
    const delivered = new Map<string, number[]>();
    const relay = new OutboxRelay({
      stores: [store],
      deliver: async (_aggregate, events) => {
        for (const event of events) {
          const versions = delivered.get(String(event.id)) ?? [];
          versions.push(event.version);
          delivered.set(String(event.id), versions);
        }
      },
      pollIntervalMs: 60_000, // the slot's reads wake it
    });
    await relay.start();
    try {
      const ids = ['a', 'b', 'c', 'd'];
      const VERSIONS = 15;
      await Promise.all(
        ids.map(async (id) => {
          const counter = new Counter(id, id);
          await repository.insert(counter);
          for (let v = 2; v <= VERSIONS; v++) {
            counter.increment();
            await repository.update(counter);
          }
        }),
      );
      const all = Array.from({ length: VERSIONS }, (_, i) => i + 1);
      await waitFor('every event delivered', () => ids.every((id) => delivered.get(id)?.length === VERSIONS));
      for (const id of ids) expect({ id, versions: delivered.get(id) }).toEqual({ id, versions: all });
      // Every transaction finished: the slot's confirmed position reaches the last write's commit.
      const written = (await pool.query<{ lsn: string }>('SELECT pg_current_wal_lsn()::text AS lsn')).rows[0].lsn;
      await waitFor('the slot confirmed past the writes', async () => {
        const { rows } = await pool.query(
          'SELECT confirmed_flush_lsn >= $2::pg_lsn AS past FROM pg_replication_slots WHERE slot_name = $1',
          [store.slot, written],
        );
        return rows[0].past === true;
      });
      const status = await relay.status();
      expect(status).toMatchObject({ pending: 0, deadLetters: 0 });
      expect(status.slots).toEqual([
        expect.objectContaining({ slot: store.slot, held: true, active: true, retainedWalBytes: expect.any(Number) }),
      ]);
    } finally {
      await relay.stop();
      await store.dropSlot();
    }
  });

  it('one consumer per slot: a second relay waits, claims nothing, and takes over when the first stops', async () => {
    const first = walStore('single');
    const second = walStore('single', { slot: first.slot, pool: new pg.Pool({ connectionString: poolUrl(), max: 4 }) });
    const repository = new CounterPostgresRepository({
      aggregate: Counter,
      pool,
      table: 'counters_single',
      outbox: first,
    });
    const delivered: string[] = [];
    const relay = (store: PostgresWalOutboxStore, name: string) =>
      new OutboxRelay({
        stores: [store],
        deliver: async (_aggregate, events) => void delivered.push(...events.map((e) => `${name} ${String(e.id)}`)),
        pollIntervalMs: 50,
      });
    const one = relay(first, 'one');
    const two = relay(second, 'two');
    try {
      await one.start();
      await first.whenHolding();
      await two.start();
      await repository.insert(new Counter('x', 'first'));
      await waitFor('the first relay to deliver', () => delivered.includes('one x'));
      expect(second.holdsSlot).toBe(false);
      expect(await second.claim({ owner: 'probe', limit: 10, leaseMs: 1_000, now: Date.now() })).toEqual([]);
      await one.stop();
      await second.whenHolding();
      await repository.insert(new Counter('y', 'second'));
      await waitFor('the second relay to deliver', () => delivered.includes('two y'));
      expect(delivered).toEqual(['one x', 'two y']);
    } finally {
      await one.stop();
      await two.stop();
      await second.dropSlot();
      await second.pool.end();
    }
  });
});

@Injectable()
class WalProjection {
  readonly received: string[] = [];
  @OnDataSync(Counter)
  project(events: readonly DataSyncEvent[]): void {
    this.received.push(...events.map((e) => `${String(e.id)}@${e.version}`));
  }
}

describe('PostgresWalOutboxStore: reading the slot', () => {
  /** Commits `count` writes of one event each (version 1…count of one instance), as a repository's write emits them. */
  async function emitWrites(store: PostgresWalOutboxStore, count: number, at = 1): Promise<void> {
    const client = await pool.connect();
    try {
      await client.query('SET synchronous_commit = off');
      for (let version = at; version < at + count; version++) {
        const event = { eventId: randomUUID(), type: 'UPSERT', aggregate: 'paced', id: 'p-1', version, data: {} };
        await client.query('SELECT pg_logical_emit_message(true, $1, $2)', [
          store.prefix,
          JSON.stringify({ s: Date.now(), n: 0, e: [event] }),
        ]);
      }
    } finally {
      client.release();
    }
  }

  /** Claims and acks until `count` events were delivered; resolves their versions in delivery order. */
  async function drain(store: PostgresWalOutboxStore, count: number): Promise<number[]> {
    const versions: number[] = [];
    await waitFor(`${count} events delivered`, async () => {
      for (const claim of await store.claim({ owner: 'drain', limit: 10, leaseMs: 60_000, now: Date.now() })) {
        versions.push(...claim.events.map((record) => record.version));
        await store.ack(
          'drain',
          claim.events.map((record) => record.eventId),
        );
      }
      return versions.length >= count;
    });
    return versions;
  }

  it('stops reading at maxBuffered unfinished events and reads on once the relays caught up: memory stays bounded, nothing is skipped', async () => {
    const store = walStore('paced', { maxBuffered: 20 });
    await store.start();
    await store.whenHolding();
    const reader = (store as unknown as { reader: { paused: boolean } }).reader;
    try {
      await emitWrites(store, 3_000);
      await waitFor('reading to pause', () => reader.paused);
      // Stopped with far fewer than were committed held (what had arrived with the last read is kept).
      expect((await store.status(Date.now())).pending).toBeLessThan(3_000);
      const versions = await drain(store, 3_000);
      expect(versions).toEqual(Array.from({ length: 3_000 }, (_, i) => i + 1));
    } finally {
      await store.stop();
    }
  }, 120_000);

  it("ignores a message with the outbox's prefix that is not a write's, and reads on", async () => {
    const store = walStore('foreign');
    await store.start();
    await store.whenHolding();
    try {
      await emitWrites(store, 1, 1);
      await pool.query('SELECT pg_logical_emit_message(true, $1, $2)', [store.prefix, 'not a write {']);
      await pool.query('SELECT pg_logical_emit_message(true, $1, $2)', [store.prefix, '{"s":1,"n":0,"e":[null]}']);
      await emitWrites(store, 1, 2);
      expect(await drain(store, 2)).toEqual([1, 2]);
    } finally {
      await store.stop();
    }
  });
});

describe('RepositoryModule.forRoot({ postgres, outbox: { postgresStore } })', () => {
  it("the module's PostgresRepository writes to the WAL outbox; its relay reads the slot and reports it; closing gives the slot up", async () => {
    const store = walStore('module');
    const moduleRef = await Test.createTestingModule({
      imports: [
        RepositoryModule.forRoot({ postgres: { pool }, outbox: { postgresStore: () => store } }),
        RepositoryModule.forFeature([
          { aggregate: Counter, repository: CounterPostgresRepository, table: 'counters_module' },
        ]),
      ],
      providers: [WalProjection],
    }).compile();
    const app = await moduleRef.init();
    try {
      const counters = app.get<IRepository<string, Counter>>(getRepositoryToken(Counter));
      const counter = new Counter('m', 'module');
      await counters.insert(counter);
      counter.increment();
      await counters.update(counter);
      await waitFor('the events delivered', () => app.get(WalProjection).received.length === 2);
      expect(app.get(WalProjection).received).toEqual(['m@1', 'm@2']);
      expect((await app.get(OutboxRelay).status()).slots).toEqual([
        expect.objectContaining({ slot: store.slot, held: true }),
      ]);
    } finally {
      await app.close();
    }
    expect(store.holdsSlot).toBe(false);
    await store.dropSlot();
  });
});

describe('PostgresWalOutboxStore: start-up', () => {
  it('refuses a server without wal_level = logical, naming the setting and how to set it', async () => {
    const replica = await startPostgresCluster({ settings: { wal_level: 'replica' } });
    const other = new pg.Pool({ connectionString: replica.url, max: 2 });
    try {
      const store = new PostgresWalOutboxStore({ pool: other });
      await expect(store.start()).rejects.toThrow(
        /needs wal_level = logical, and this PostgreSQL runs wal_level = replica\. Set it with ALTER SYSTEM SET wal_level = 'logical'/,
      );
      const repository = new CounterPostgresRepository({ aggregate: Counter, pool: other, outbox: store });
      await expect(repository.insert(new Counter('z', 'refused'))).rejects.toThrow(/wal_level = logical/);
    } finally {
      await other.end();
      await replica.stop();
    }
  }, 120_000);
});

function poolUrl(): string {
  const url = new URL(server.url);
  url.searchParams.set('options', `-c search_path=${schema}`);
  return url.toString();
}
