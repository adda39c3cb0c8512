// One application process on PostgreSQL with the outbox on, for the cross-process and crash
// tests of outbox-relay.postgres.spec.ts. Runs the built packages, as an application would.
//
// FIXTURE_DATABASE_URL   the database (search_path set to the test's schema)
// FIXTURE_MODE           'relay'   run an OutboxRelay until SIGTERM (graceful) or SIGKILL
//                        'write'   write FIXTURE_WRITES versions of counter FIXTURE_ID, print
//                                  "committed <id>@<version>" after each, then wait (a crash
//                                  test kills it there: after the commit, before any handler)
//                        'app'     write counters FIXTURE_PREFIX-0..n-1 for ever (load, a write
//                                  every 10 ms or so) and run a relay, like one instance of an application
// FIXTURE_LEASE_MS, FIXTURE_BATCH, FIXTURE_HANDLER_DELAY_MS: relay settings
// FIXTURE_PARK=after-claim      parks the relay after its first claim (its onClaimed option).
// FIXTURE_CLOCK_AHEAD_MS        the relay's clock runs this far ahead of the machine's: every
//                               lease a relay that died took is over for it at once.
//
// The handler records every delivery in `deliveries` (one row per delivery, duplicates
// included, in delivery order by seq) and keeps the read model `read_model` idempotently by
// version — two statements, not one transaction with the ack: a crash between them is what
// makes deliveries repeat.
import pg from 'pg';
import { OptimisticLockError, PostgresRepository } from '@ddd-kit/repository';
import { OutboxRelay, PostgresOutboxStore } from '@ddd-kit/repository/outbox';
// The contract suites' Counter, from the built library by path: its entry (@ddd-kit/repository/testing)
// also holds the Jest contract suites, which load only inside Jest.
import { Counter } from '../../../libs/repository/dist/testing/counter.aggregate.js';
import { sleep } from '../../support/wait.js';

const env = process.env;
const pool = new pg.Pool({ connectionString: env.FIXTURE_DATABASE_URL, max: 6 });
pool.on('error', () => undefined);

// The columns of the tests' CounterPostgresRepository, which reads this table from outside.
class CounterRepository extends PostgresRepository {
  table = 'counters';
  columns = { label: 'text NOT NULL', count: 'integer NOT NULL', tags: 'jsonb NOT NULL' };
  toRow(counter) {
    return { label: counter.label, count: counter.count, tags: counter.tags };
  }
  toAggregate(row) {
    return Counter.restore(row.id, row.label, row.count, row.tags);
  }
}

const store = new PostgresOutboxStore({ pool, table: 'outbox' });
const counters = new CounterRepository({ aggregate: Counter, pool, outbox: store });
const delay = Number(env.FIXTURE_HANDLER_DELAY_MS ?? 0);
const owner = `${env.FIXTURE_NAME ?? 'relay'}:${process.pid}`;

async function handle(aggregate, events) {
  for (const event of events) {
    // Jitter, so that two relays' deliveries interleave.
    if (delay > 0) await sleep(Math.floor(Math.random() * delay));
    await pool.query('INSERT INTO deliveries (event_id, aggregate_id, version, owner) VALUES ($1, $2, $3, $4)', [
      event.eventId,
      String(event.id),
      event.version,
      owner,
    ]);
    await pool.query(
      `INSERT INTO read_model (id, version, count) VALUES ($1, $2, $3)
       ON CONFLICT (id) DO UPDATE SET version = EXCLUDED.version, count = EXCLUDED.count WHERE read_model.version < EXCLUDED.version`,
      [String(event.id), event.version, event.snapshot?.count ?? -1],
    );
  }
}

function relay() {
  return new OutboxRelay({
    stores: [store],
    deliver: handle,
    owner,
    autoStart: false,
    leaseMs: Number(env.FIXTURE_LEASE_MS ?? 30_000),
    batchSize: Number(env.FIXTURE_BATCH ?? 10),
    pollIntervalMs: 50,
    backoff: { initialMs: 50, maxMs: 500 },
    ...(env.FIXTURE_CLOCK_AHEAD_MS ? { clock: () => Date.now() + Number(env.FIXTURE_CLOCK_AHEAD_MS) } : {}),
    ...(env.FIXTURE_PARK === 'after-claim' ? { onClaimed: parkForever } : {}),
  });
}

/** Stops the relay for good right after a claim, before any handler ran: where a crash test kills it. */
function parkForever(claims) {
  process.stdout.write(`outbox-relay parked after claiming ${claims.length} instance(s)\n`);
  return new Promise(() => undefined);
}

const say = (line) => process.stdout.write(`${line}\n`);

if (env.FIXTURE_MODE === 'relay' || env.FIXTURE_MODE === 'app') {
  const running = relay();
  process.on('SIGTERM', async () => {
    await running.stop();
    await pool.end();
    process.exit(0);
  });
  await running.start();
  say('ready');
}

if (env.FIXTURE_MODE === 'write') {
  const id = env.FIXTURE_ID;
  const counter = new Counter(id, 'crash');
  await counters.insert(counter);
  say(`committed ${id}@1`);
  for (let v = 2; v <= Number(env.FIXTURE_WRITES ?? 1); v++) {
    counter.increment();
    await counters.update(counter);
    say(`committed ${id}@${v}`);
  }
  say('parked');
  await new Promise(() => undefined); // killed here
}

if (env.FIXTURE_MODE === 'app') {
  const ids = Array.from({ length: Number(env.FIXTURE_COUNTERS ?? 4) }, (_, i) => `${env.FIXTURE_PREFIX}-${i}`);
  for (;;) {
    const id = ids[Math.floor(Math.random() * ids.length)];
    try {
      const counter = await counters.findById(id);
      if (counter === null) await counters.insert(new Counter(id, 'load'));
      else {
        counter.increment();
        await counters.update(counter);
      }
    } catch (error) {
      if (!(error instanceof OptimisticLockError) && error?.name !== 'DuplicateAggregateError') throw error;
    }
    await sleep(10); // a steady load, not a busy loop: the other processes get the CPU too
  }
}
