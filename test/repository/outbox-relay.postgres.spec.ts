// The outbox on PostgreSQL across processes: two relays in two processes keep each aggregate's
// order; a process killed after its write committed and before any handler ran loses nothing
// (the next relay delivers, the read model converges, no reconciler); and under load with
// repeated SIGKILLs, events written N, delivered ≥ N, lost 0 (duplicates counted and reported).
// The processes run the built packages (support/outbox-process.fixture.mjs).
import { afterAll, afterEach, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { PostgresOutboxStore } from '@ddd-kit/repository/outbox';
import { assertBuilt } from '../support/built.js';
import { postgresSchema } from '../support/servers.js';
import { waitFor } from '../support/wait.js';
import { Counter, CounterPostgresRepository } from './support/counter.aggregate.js';

// Processes start, write, get killed and restart: minutes on a shared machine, not seconds.
jest.setTimeout(300_000);

const FIXTURE = fileURLToPath(new URL('./support/outbox-process.fixture.mjs', import.meta.url));

/** A fixture process, its output read line by line. */
class Proc {
  readonly lines: string[] = [];
  private readonly waiters: Array<() => void> = [];
  private stderr = '';
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  private constructor(private readonly child: ChildProcess) {
    let buffer = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      buffer += chunk.toString();
      const parts = buffer.split('\n');
      buffer = parts.pop()!;
      this.lines.push(...parts);
      this.waiters.splice(0).forEach((wake) => wake());
    });
    child.stderr!.on('data', (chunk: Buffer) => void (this.stderr += chunk.toString()));
    this.exited = new Promise((resolve) =>
      child.once('exit', (code, signal) => {
        this.waiters.splice(0).forEach((wake) => wake());
        resolve({ code, signal });
      }),
    );
  }

  static start(env: Record<string, string>): Proc {
    return new Proc(fork(FIXTURE, [], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe', 'ipc'] }));
  }

  /** Resolves once the process printed a line that matches; rejects when it exits first (with its stderr). */
  async line(match: (line: string) => boolean): Promise<void> {
    while (!this.lines.some(match)) {
      if (this.child.exitCode !== null || this.child.signalCode !== null)
        throw new Error(`the fixture exited (${this.child.exitCode ?? this.child.signalCode}) first:\n${this.stderr}`);
      await new Promise<void>((resolve) => this.waiters.push(resolve));
    }
  }

  /** Waits for a line that matches, `what` naming it should it never come. */
  printed(what: string, match: (line: string) => boolean): Promise<void> {
    return waitFor(what, this.line(match));
  }

  get alive(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  async kill(signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    if (!this.alive) return;
    this.child.kill(signal);
    await this.exited;
  }

  get errors(): string {
    return this.stderr;
  }
}

let schema: Awaited<ReturnType<typeof postgresSchema>>;
let pool: pg.Pool;
let store: PostgresOutboxStore;
let counters: CounterPostgresRepository;
const procs: Proc[] = [];

function start(env: Record<string, string>): Proc {
  const proc = Proc.start({ FIXTURE_DATABASE_URL: schema.url, ...env });
  procs.push(proc);
  return proc;
}

const pendingIsZero = async () => (await store.status(Date.now())).pending === 0;

beforeAll(async () => {
  assertBuilt('libs/repository');
  schema = await postgresSchema('outbox_processes');
  pool = new pg.Pool({ connectionString: schema.url, max: 6 });
  store = new PostgresOutboxStore({ pool, table: 'outbox' });
  counters = new CounterPostgresRepository({ aggregate: Counter, pool, outbox: store });
  await counters.ensureTable();
  await store.ensureTable();
  await pool.query(`CREATE TABLE deliveries (seq bigserial PRIMARY KEY, event_id text NOT NULL, aggregate_id text NOT NULL, version bigint NOT NULL, owner text NOT NULL);
                    CREATE TABLE read_model (id text PRIMARY KEY, version bigint NOT NULL, count integer NOT NULL)`);
});

afterEach(async () => {
  await Promise.all(procs.splice(0).map((p) => p.kill()));
  await pool.query('TRUNCATE counters, outbox, deliveries, read_model');
});

afterAll(async () => {
  await pool?.end();
  await schema?.drop();
});

/** Per aggregate, the versions in the order the handlers received them. */
async function deliveredInOrder(): Promise<Map<string, number[]>> {
  const { rows } = await pool.query<{ aggregate_id: string; version: string }>(
    'SELECT aggregate_id, version FROM deliveries ORDER BY seq',
  );
  const byId = new Map<string, number[]>();
  for (const row of rows) byId.set(row.aggregate_id, [...(byId.get(row.aggregate_id) ?? []), Number(row.version)]);
  return byId;
}

describe('outbox relays in several processes (PostgreSQL)', () => {
  it('two relays in two processes: every event delivered, none out of version order for one aggregate', async () => {
    const relays = ['a', 'b'].map((name) =>
      start({
        FIXTURE_MODE: 'relay',
        FIXTURE_NAME: `relay-${name}`,
        FIXTURE_BATCH: '2',
        FIXTURE_HANDLER_DELAY_MS: '4',
      }),
    );
    await Promise.all(relays.map((r) => r.printed('a relay to start', (l) => l === 'ready')));
    const ids = Array.from({ length: 8 }, (_, i) => `agg-${i}`);
    const VERSIONS = 25;
    const aggregates = ids.map((id) => new Counter(id, 'two relays'));
    for (const counter of aggregates) await counters.insert(counter);
    for (let v = 2; v <= VERSIONS; v++) {
      await Promise.all(
        aggregates.map(async (counter) => {
          counter.increment();
          await counters.update(counter);
        }),
      );
    }
    await waitFor('the relays to deliver every event', pendingIsZero);
    const delivered = await deliveredInOrder();
    for (const id of ids) {
      const versions = delivered.get(id) ?? [];
      // In order: never a version below one already delivered. Every version at least once.
      for (let i = 1; i < versions.length; i++) expect([id, versions[i] >= versions[i - 1]]).toEqual([id, true]);
      expect([...new Set(versions)]).toEqual(Array.from({ length: VERSIONS }, (_, i) => i + 1));
    }
    const { rows: owners } = await pool.query<{ owner: string; n: string }>(
      "SELECT split_part(owner, ':', 1) AS owner, count(*) AS n FROM deliveries GROUP BY 1 ORDER BY 1",
    );
    // Both relays took part (else the case would prove nothing about two of them).
    expect(owners.map((o) => o.owner)).toEqual(['relay-a', 'relay-b']);
    const { rows: model } = await pool.query('SELECT id, version::int FROM read_model ORDER BY id');
    expect(model).toEqual(ids.map((id) => ({ id, version: VERSIONS })));
    console.log(
      `two relays: ${ids.length * VERSIONS} events; delivered by ${owners.map((o) => `${o.owner} ${o.n}`).join(', ')}`,
    );
  });

  it('crash after the write committed, before any handler ran (no relay yet): the next relay delivers and the read model converges, no reconciler', async () => {
    const writer = start({ FIXTURE_MODE: 'write', FIXTURE_ID: 'crash-1', FIXTURE_WRITES: '3' });
    await writer.printed('the writes to commit', (l) => l === 'parked');
    await writer.kill('SIGKILL');
    expect(await counters.currentVersion('crash-1')).toBe(3);
    expect((await pool.query('SELECT count(*)::int AS n FROM deliveries')).rows[0].n).toBe(0);
    expect(await store.status(Date.now())).toMatchObject({ pending: 3 });
    start({ FIXTURE_MODE: 'relay', FIXTURE_NAME: 'restarted' });
    await waitFor(
      'the read model to reach version 3',
      async () => (await pool.query("SELECT version::int FROM read_model WHERE id = 'crash-1'")).rows[0]?.version === 3,
    );
    expect((await deliveredInOrder()).get('crash-1')).toEqual([1, 2, 3]);
    await waitFor('the outbox to empty', pendingIsZero);
  });

  it('crash of a relay that had claimed the events, before its handler ran: its lease expires and the next relay delivers', async () => {
    const counter = new Counter('crash-2', 'claimed');
    await counters.insert(counter);
    counter.increment();
    await counters.update(counter);
    const parked = start({
      FIXTURE_MODE: 'relay',
      FIXTURE_NAME: 'parked',
      FIXTURE_LEASE_MS: '600000',
      FIXTURE_PARK: 'after-claim',
    });
    await parked.printed('the relay to claim and park', (l) => l.startsWith('outbox-relay parked'));
    const { rows: leased } = await pool.query<{ owner: string | null }>('SELECT owner FROM outbox ORDER BY seq');
    expect(leased.map((r) => r.owner?.split(':')[0])).toEqual(['parked', 'parked']);
    await parked.kill('SIGKILL');
    expect((await pool.query('SELECT count(*)::int AS n FROM deliveries')).rows[0].n).toBe(0);
    // The dead relay's lease still holds now: no claim takes its events.
    expect(await store.claim({ owner: 'too-early', limit: 10, leaseMs: 1_000, now: Date.now() })).toEqual([]);
    // The successor's clock runs past that lease (time moved on, without waiting for it).
    start({ FIXTURE_MODE: 'relay', FIXTURE_NAME: 'successor', FIXTURE_CLOCK_AHEAD_MS: '1200000' });
    await waitFor(
      'the read model to reach version 2',
      async () => (await pool.query("SELECT version::int FROM read_model WHERE id = 'crash-2'")).rows[0]?.version === 2,
    );
    const { rows } = await pool.query<{ owner: string }>(
      "SELECT DISTINCT split_part(owner, ':', 1) AS owner FROM deliveries",
    );
    expect(rows).toEqual([{ owner: 'successor' }]);
  });

  it('under load with repeated SIGKILLs: events written N, delivered ≥ N, lost 0, duplicates counted; the read model converges', async () => {
    const apps = new Map<string, Proc>();
    const launch = async (name: string) => {
      const proc = start({
        FIXTURE_MODE: 'app',
        FIXTURE_NAME: name,
        FIXTURE_PREFIX: name,
        FIXTURE_COUNTERS: '4',
        FIXTURE_LEASE_MS: '1000',
        FIXTURE_BATCH: '4',
      });
      apps.set(name, proc);
      await proc.printed(`${name} to start`, (l) => l === 'ready');
    };
    const deliveries = async () => (await pool.query('SELECT count(*)::int AS n FROM deliveries')).rows[0].n as number;
    await launch('app-0');
    await launch('app-1');
    const KILLS = 8;
    for (let kill = 0; kill < KILLS; kill++) {
      // Killed mid-flight: after the instances have written and delivered some more.
      const before = await deliveries();
      await waitFor('the instances to deliver', async () => (await deliveries()) >= before + 10);
      const name = `app-${kill % 2}`;
      await apps.get(name)!.kill('SIGKILL');
      await launch(name);
    }
    await Promise.all([...apps.values()].map((p) => p.kill('SIGKILL')));
    // Nothing writes now; a relay alone finishes what the killed ones left, their leases over
    // for its clock.
    start({ FIXTURE_MODE: 'relay', FIXTURE_NAME: 'final', FIXTURE_CLOCK_AHEAD_MS: '1200000' });
    await waitFor('the outbox to empty', pendingIsZero);

    // N: every stored version is one write (inserts and updates only), so one event.
    const written = Number((await pool.query('SELECT coalesce(sum(version), 0) AS n FROM counters')).rows[0].n);
    const { rows } = await pool.query<{ total: string; distinct: string }>(
      'SELECT count(*) AS total, count(DISTINCT event_id) AS distinct FROM deliveries',
    );
    const delivered = Number(rows[0].total);
    const distinct = Number(rows[0].distinct);
    const duplicates = delivered - distinct;
    const lost = written - distinct;
    console.log(
      `outbox under ${KILLS} SIGKILLs: events written ${written}, delivered ${delivered} (distinct ${distinct}), lost ${lost}, duplicates ${duplicates}`,
    );
    expect(written).toBeGreaterThan(0);
    expect(lost).toBe(0);
    expect(delivered).toBeGreaterThanOrEqual(written);
    // Exactly the events of the stored versions were delivered: one per (aggregate, version).
    const { rows: perVersion } = await pool.query<{ n: string }>(
      'SELECT count(*) AS n FROM (SELECT DISTINCT aggregate_id, version FROM deliveries) d',
    );
    expect(Number(perVersion[0].n)).toBe(written);
    // First deliveries come in version order per aggregate (repeats only repeat).
    for (const [id, versions] of await deliveredInOrder()) {
      const firsts = versions.filter((v, i) => versions.indexOf(v) === i);
      expect([id, firsts]).toEqual([id, [...firsts].sort((a, b) => a - b)]);
    }
    const { rows: drift } = await pool.query(
      'SELECT c.id, c.version, r.version AS replica FROM counters c LEFT JOIN read_model r ON r.id = c.id WHERE r.version IS DISTINCT FROM c.version',
    );
    expect(drift).toEqual([]);
  });
});
