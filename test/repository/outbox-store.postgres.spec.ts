import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { Injectable } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import {
  AggregateRoot,
  DataSyncEvent,
  getRepositoryToken,
  OnDataSync,
  PostgresRepository,
  RepositoryModule,
  type IRepository,
  type StoredRow,
} from '@ddd-kit/repository';
import { OutboxRelay, PostgresOutboxStore } from '@ddd-kit/repository/outbox';
import { runInTransaction } from '@ddd-kit/transactional-adapter-pg';
import { postgresSchema } from '../support/servers.js';
import { Counter, CounterPostgresRepository } from './support/counter.aggregate.js';
import { describeOutboxStoreContract } from '@ddd-kit/repository/testing';
import { observedPool } from './support/postgres.support.js';
import { waitFor } from '../support/wait.js';

/** An aggregate with numeric ids (a bigint id column), to see ids keep their type through the outbox. */
class Ticket extends AggregateRoot<number, { id: number; title: string }> {
  constructor(
    id: number,
    public title: string,
  ) {
    super(id);
  }
}

class TicketRepository extends PostgresRepository<number, Ticket, { title: string }> {
  protected readonly table = 'tickets_payload';
  protected readonly columns = { title: 'text NOT NULL' };
  protected override get idType(): 'bigint' {
    return 'bigint';
  }
  protected toRow(ticket: Ticket) {
    return { title: ticket.title };
  }
  protected toAggregate(row: StoredRow<number, { title: string }>): Ticket {
    return new Ticket(row.id, row.title);
  }
}

// One schema for the suite; every case on a table pair of its own.
let schema: Awaited<ReturnType<typeof postgresSchema>>;
let pool: pg.Pool;
let n = 0;
beforeAll(async () => {
  schema = await postgresSchema('outbox_store');
  pool = new pg.Pool({ connectionString: schema.url, max: 12 });
});
afterAll(async () => {
  await pool?.end();
  await schema?.drop();
});

describeOutboxStoreContract('PostgresOutboxStore', async () => {
  const i = ++n;
  const store = new PostgresOutboxStore({ pool, table: `outbox_${i}` });
  return {
    store,
    repository: new CounterPostgresRepository({ aggregate: Counter, pool, table: `counters_${i}`, outbox: store }),
    close: async () => {},
  };
});

describe('PostgresOutboxStore: the write', () => {
  it('stores the row and its events in one statement, every value a parameter', async () => {
    const observed = observedPool(pool);
    const store = new PostgresOutboxStore({ pool: observed.pool, table: 'outbox_write' });
    const repository = new CounterPostgresRepository({
      aggregate: Counter,
      pool: observed.pool,
      table: 'counters_write',
      outbox: store,
    });
    await repository.insert(new Counter('w', "it's; DROP TABLE x --"));
    await store.ensureTable();
    observed.sent.length = 0;
    const counter = (await repository.findById('w'))!;
    counter.increment();
    await repository.update(counter);
    const writes = observed.sent.filter((s) => /INSERT INTO "outbox_write"/.test(s.text));
    expect(writes).toHaveLength(1);
    expect(writes[0].text).toMatch(/^WITH w AS \(UPDATE "counters_write" .* RETURNING 1\) INSERT INTO "outbox_write"/s);
    expect(writes[0].text).not.toContain('DROP');
    expect(observed.sent.some((s) => /^BEGIN/.test(s.text))).toBe(false);
    const { rows } = await pool.query(
      'SELECT aggregate, aggregate_id, version, payload FROM outbox_write ORDER BY seq',
    );
    expect(rows.map((r) => [r.aggregate, r.aggregate_id, Number(r.version), r.payload.type])).toEqual([
      ['Counter', 'w', 1, 'UPSERT'],
      ['Counter', 'w', 2, 'UPSERT'],
    ]);
    expect(rows[0].payload.snapshot.label).toBe("it's; DROP TABLE x --");
  });

  it('stores only what the columns do not hold of an event, and reads back every event as written (string and numeric ids, a row of an earlier version)', async () => {
    const store = new PostgresOutboxStore({ pool, table: 'outbox_payload' });
    const counters = new CounterPostgresRepository({
      aggregate: Counter,
      pool,
      table: 'counters_payload',
      outbox: store,
    });
    const tickets = new TicketRepository({ aggregate: Ticket, pool, outbox: store });
    // What each write collected, as the hook made it.
    const published: DataSyncEvent[] = [];
    const recorded = <A extends AggregateRoot<any, any>>(aggregate: A): A => {
      const hook = aggregate.triggerDataSyncHook.bind(aggregate);
      aggregate.triggerDataSyncHook = () => {
        hook();
        published.push(aggregate.getDataSyncEvents().at(-1)!);
      };
      return aggregate;
    };
    const counter = recorded(new Counter('p', 'payload'));
    await counters.insert(counter);
    counter.tags.push('x');
    await counters.update(counter);
    await counters.remove(counter);
    await tickets.insert(recorded(new Ticket(42, 'numeric')));
    expect(published).toHaveLength(4);
    const { rows } = await pool.query('SELECT payload::text AS payload FROM outbox_payload ORDER BY seq');
    expect(rows.map((r) => JSON.parse(r.payload))).toEqual([
      { type: 'UPSERT', snapshot: { id: 'p', label: 'payload', count: 0, tags: [] } },
      { type: 'UPSERT', snapshot: { id: 'p', label: 'payload', count: 0, tags: ['x'] } },
      { type: 'PURGE' },
      { type: 'UPSERT', snapshot: { id: 42, title: 'numeric' }, id: 42 },
    ]);
    // A row of an earlier version: the whole event in the payload.
    const old = DataSyncEvent.upsert('Counter', 'old', 7, { id: 'old', label: 'earlier', count: 6, tags: [] });
    await pool.query(
      `INSERT INTO outbox_payload (event_id, aggregate, aggregate_id, version, payload, stored_at, next_attempt_at) VALUES ($1, 'Counter', 'old', 7, $2, 0, 0)`,
      [old.eventId, JSON.stringify(old)],
    );
    const claimed = (await store.claim({ owner: 'reader', limit: 10, leaseMs: 60_000, now: Date.now() })).flatMap(
      (claim) => claim.events.map((record) => record.event),
    );
    const byId = (events: DataSyncEvent[]) => [...events].sort((a, b) => a.eventId.localeCompare(b.eventId));
    expect(byId(claimed)).toStrictEqual(byId([...published, old].map((event) => ({ ...event }))));
    expect(claimed.map((event) => Object.keys(event))).toEqual(claimed.map((event) => Object.keys({ ...event })));
    expect(claimed.find((event) => event.aggregate === 'Ticket')?.id).toBe(42);
  });

  it('a write whose condition fails inserts no event', async () => {
    const store = new PostgresOutboxStore({ pool, table: 'outbox_conflict' });
    const repository = new CounterPostgresRepository({
      aggregate: Counter,
      pool,
      table: 'counters_conflict',
      outbox: store,
    });
    await repository.insert(new Counter('c', 'one'));
    await expect(repository.insert(new Counter('c', 'two'))).rejects.toThrow();
    expect((await pool.query('SELECT count(*)::int AS n FROM outbox_conflict')).rows[0].n).toBe(1);
  });

  it('refuses a table name that is not an identifier', () => {
    expect(() => new PostgresOutboxStore({ pool, table: 'x; DROP TABLE y' })).toThrow(/identifier/);
    expect(() => new PostgresOutboxStore({ pool, notifyChannel: 'a b' })).toThrow(/identifier/);
  });
});

/** `pool` whose `SELECT pg_notify` statements are recorded, and held until `release()` while `hold` is set. */
function notifyObservedPool(pool: pg.Pool) {
  const observed = observedPool(pool);
  const notifies: number[] = [];
  let held: Array<() => void> = [];
  const state = { hold: false };
  const proxy = new Proxy(observed.pool, {
    get(target, key) {
      if (key !== 'query') return Reflect.get(target, key, target);
      return async (text: string | pg.QueryConfig, values?: unknown[]) => {
        if ((typeof text === 'string' ? text : text.text).startsWith('SELECT pg_notify')) {
          notifies.push(observed.sent.length);
          if (state.hold) await new Promise<void>((resolve) => held.push(resolve));
        }
        return target.query(text, values);
      };
    },
  });
  const release = () => {
    state.hold = false;
    const waiting = held;
    held = [];
    waiting.forEach((resolve) => resolve());
  };
  return { pool: proxy, sent: observed.sent, notifies, state, release };
}

/** A repository and its outbox (tables `counters_<name>`, `outbox_<name>`) on a pool whose NOTIFYs are observed. */
async function wakeObserved(name: string) {
  const observed = notifyObservedPool(pool);
  const store = new PostgresOutboxStore({ pool: observed.pool, table: `outbox_${name}` });
  const repository = new CounterPostgresRepository({
    aggregate: Counter,
    pool: observed.pool,
    table: `counters_${name}`,
    outbox: store,
  });
  await repository.ensureTable();
  await store.ensureTable();
  return { observed, store, repository };
}

/**
 * True once the store's wake-up has nothing on its way: no NOTIFY being sent, none owed after
 * it. Read from the store's inside, as nothing outside tells "no NOTIFY will follow".
 */
function wakeUpIdle(store: PostgresOutboxStore): boolean {
  return !(store as unknown as { wakeUp: { notifying: boolean } }).wakeUp.notifying;
}

describe('PostgresOutboxStore: waking relays after the commit, never inside it', () => {
  it("the writer's statement carries no NOTIFY; an autocommitted pg_notify follows the write", async () => {
    const { observed, repository } = await wakeObserved('wake');
    observed.sent.length = 0;
    await repository.insert(new Counter('w', 'wake'));
    await waitFor('the NOTIFY', () => observed.notifies.length === 1);
    const writes = observed.sent.filter((s) => /INSERT INTO "outbox_wake"/.test(s.text));
    expect(writes).toHaveLength(1);
    expect(writes[0].text).not.toMatch(/notify/i);
    // Sent after the write (its own statement, on the pool), with the channel as a parameter.
    const notify = observed.sent[observed.notifies[0]];
    expect(observed.sent.indexOf(writes[0])).toBeLessThan(observed.notifies[0]);
    expect(notify).toMatchObject({ text: "SELECT pg_notify($1, '')", values: ['ddd_kit_outbox'] });
  });

  it('in a transaction: no NOTIFY before the commit, one after it, none after a rollback', async () => {
    const { observed, store, repository } = await wakeObserved('wake_tx');
    await runInTransaction(observed.pool, async () => {
      await repository.insert(new Counter('t1', 'one'));
      await repository.insert(new Counter('t2', 'two'));
      // A wake-up at the write would have sent its NOTIFY at once (and the order below shows it too).
      expect(observed.notifies).toEqual([]);
    });
    await waitFor('the NOTIFY after the commit', () => observed.notifies.length >= 1);
    await waitFor('the wake-up to settle', () => wakeUpIdle(store));
    expect(observed.notifies).toHaveLength(1); // one per transaction, not per write
    const commit = observed.sent.findIndex((s) => s.text === 'COMMIT');
    expect(commit).toBeGreaterThanOrEqual(0);
    expect(observed.notifies.every((at) => at > commit)).toBe(true);
    expect(observed.sent.filter((s) => /notify/i.test(s.text) && !s.text.startsWith('SELECT pg_notify'))).toEqual([]);
    await expect(
      runInTransaction(observed.pool, async () => {
        await repository.insert(new Counter('t3', 'undone'));
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    await waitFor('the wake-up to settle', () => wakeUpIdle(store));
    expect(observed.notifies).toHaveLength(1);
  });

  it('coalesced: writes that commit while a NOTIFY is on its way get one more NOTIFY after it, not one each', async () => {
    const { observed, store, repository } = await wakeObserved('wake_burst');
    observed.state.hold = true;
    await repository.insert(new Counter('first', 'first'));
    await waitFor('the first NOTIFY', () => observed.notifies.length === 1);
    await Promise.all(Array.from({ length: 20 }, (_, i) => repository.insert(new Counter(`b${i}`, 'burst'))));
    expect(observed.notifies).toHaveLength(1);
    observed.release();
    await waitFor('the second NOTIFY', () => observed.notifies.length === 2);
    await waitFor('the wake-up to settle', () => wakeUpIdle(store));
    expect(observed.notifies).toHaveLength(2);
  });

  it('a steady stream of writes costs at most one NOTIFY per millisecond, and the last write is followed by one', async () => {
    const { observed, repository } = await wakeObserved('wake_stream');
    const counter = new Counter('s', 'stream');
    await repository.insert(counter);
    await waitFor('the first NOTIFY', () => observed.notifies.length === 1);
    const began = performance.now();
    for (let i = 0; i < 200; i++) {
      counter.increment();
      await repository.update(counter);
    }
    const elapsedMs = performance.now() - began;
    const lastWrite = observed.sent.findLastIndex((sent) => /INSERT INTO "outbox_wake_stream"/.test(sent.text));
    await waitFor('a NOTIFY after the last write', () => observed.notifies.some((at) => at > lastWrite));
    const during = observed.notifies.length - 1;
    expect(during).toBeGreaterThanOrEqual(1);
    // Counted against the time the writes took: a slower machine only widens the bound. (Fewer
    // NOTIFYs than writes is not asserted: on a machine where each write takes over a millisecond,
    // one a write is right; the coalescing itself is the case above, driven by a held NOTIFY.)
    expect(during).toBeLessThanOrEqual(Math.ceil(elapsedMs) + 2);
  });

  it('a relay of this process is woken in process (before any NOTIFY), one elsewhere by the NOTIFY', async () => {
    const { observed, store, repository } = await wakeObserved('wake_relays');
    const delivered: string[] = [];
    // Polls once a minute: only a wake-up delivers within the case.
    const local = new OutboxRelay({
      stores: [store],
      deliver: async (_aggregate, events) => void delivered.push(...events.map((e) => `local ${String(e.id)}`)),
      pollIntervalMs: 60_000,
    });
    // Another process's relay: a store of its own, on a pool of its own.
    const otherPool = new pg.Pool({ connectionString: schema.url, max: 2 });
    const other = new OutboxRelay({
      stores: [new PostgresOutboxStore({ pool: otherPool, table: 'outbox_wake_relays' })],
      deliver: async (_aggregate, events) => void delivered.push(...events.map((e) => `other ${String(e.id)}`)),
      pollIntervalMs: 60_000,
    });
    try {
      await local.start();
      observed.state.hold = true;
      await repository.insert(new Counter('in-process', 'local'));
      await waitFor('the in-process delivery', () => delivered.includes('local in-process'));
      await local.stop();
      observed.release();
      await other.start();
      // The other relay's own start claims what is there: a write after it needs the NOTIFY.
      await waitFor('the other relay to settle', async () => (await store.status(Date.now())).pending === 0);
      await repository.insert(new Counter('elsewhere', 'other'));
      await waitFor('the delivery elsewhere', () => delivered.includes('other elsewhere'));
    } finally {
      observed.release();
      await local.stop();
      await other.stop();
      await otherPool.end();
    }
  });
});

describe('PostgresOutboxStore: in an ambient transaction', () => {
  it('the events commit with the transaction, and a rollback takes them away with the row', async () => {
    const store = new PostgresOutboxStore({ pool, table: 'outbox_tx' });
    const repository = new CounterPostgresRepository({ aggregate: Counter, pool, table: 'counters_tx', outbox: store });
    await repository.ensureTable();
    await store.ensureTable();
    await runInTransaction(pool, async () => {
      await repository.insert(new Counter('kept', 'kept'));
      await repository.insert(new Counter('kept-2', 'kept'));
    });
    await expect(
      runInTransaction(pool, async () => {
        await repository.insert(new Counter('undone', 'undone'));
        throw new Error('the use case fails after the write');
      }),
    ).rejects.toThrow('the use case fails');
    const { rows } = await pool.query('SELECT aggregate_id FROM outbox_tx ORDER BY seq');
    expect(rows.map((r) => r.aggregate_id)).toEqual(['kept', 'kept-2']);
    expect(await repository.existsById('undone')).toBe(false);
  });
});

@Injectable()
class PgProjection {
  readonly received: string[] = [];
  @OnDataSync(Counter)
  project(events: readonly DataSyncEvent[]): void {
    this.received.push(...events.map((e) => `${String(e.id)}@${e.version}`));
  }
}

describe('RepositoryModule.forRoot({ postgres, outbox })', () => {
  it("a PostgresRepository writes its events to the module's outbox table; the relay delivers them", async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [
        RepositoryModule.forRoot({ postgres: { pool }, outbox: { relay: false, table: 'module_outbox' } }),
        RepositoryModule.forFeature([
          { aggregate: Counter, repository: CounterPostgresRepository, table: 'module_counters' },
        ]),
      ],
      providers: [PgProjection],
    }).compile();
    const app = await moduleRef.init();
    try {
      const counters = app.get<IRepository<string, Counter>>(getRepositoryToken(Counter));
      const counter = new Counter('m', 'module');
      await counters.insert(counter);
      counter.increment();
      await counters.update(counter);
      expect(app.get(PgProjection).received).toEqual([]);
      expect((await pool.query('SELECT count(*)::int AS n FROM module_outbox')).rows[0].n).toBe(2);
      const relay = app.get(OutboxRelay);
      expect(await relay.status()).toMatchObject({ pending: 2, deadLetters: 0 });
      await relay.drain();
      expect(app.get(PgProjection).received).toEqual(['m@1', 'm@2']);
      expect((await pool.query('SELECT count(*)::int AS n FROM module_outbox')).rows[0].n).toBe(0);
    } finally {
      await app.close();
    }
  });
});
