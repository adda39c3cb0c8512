// What the outbox rows share (bench/outbox.bench.js and bench/outbox-peer.js): the aggregate
// and its two repositories, writers rotating over aggregates of their own, draining a store,
// and paced writes for lag.
import { MongooseRepository, PostgresRepository } from '@ddd-kit/repository';
import { Counter } from '../libs/repository/dist/testing/counter.aggregate.js';
import { sleep } from '../test/support/wait.js';

// The contract suites' Counter, from its own file: the testing entry loads @jest/globals, which
// refuses to load outside Jest. bench/repository.bench.js writes it too.
export { Counter };

export class CounterDocuments extends MongooseRepository {
  toDocument(counter) {
    return { label: counter.label, count: counter.count };
  }

  toAggregate(document) {
    const counter = new Counter(document._id, document.label);
    counter.count = document.count;
    return counter;
  }
}

export class CounterRows extends PostgresRepository {
  table = 'outbox_bench_counters';
  columns = { label: 'text NOT NULL', count: 'integer NOT NULL' };

  toRow(counter) {
    return { label: counter.label, count: counter.count };
  }

  toAggregate(row) {
    const counter = new Counter(row.id, row.label);
    counter.count = row.count;
    return counter;
  }
}

export const WRITERS = 16;
/**
 * Aggregates each writer takes in turn: a relay keeps an aggregate's outbox short (an aggregate
 * is written far less often than the relay runs), so no document carries a slice's worth of
 * events and no side updates a row that is still hot from its previous write.
 */
export const PER_WRITER = 32;
export const OWNER = 'outbox-bench';

/**
 * Updates of a set of loaded aggregates, writer `w` cycling through its own PER_WRITER of them.
 * Each update is checked: the version advanced by one (the repository throws
 * OptimisticLockError when its conditional write matched nothing); it resolves to the
 * aggregate's id and the version it wrote.
 */
export function rotatingUpdates(repository, aggregates) {
  const next = new Array(WRITERS).fill(0);
  let done = 0;
  const update = async (w) => {
    const counter = aggregates[w * PER_WRITER + (next[w]++ % PER_WRITER)];
    const before = counter.oldVersion;
    counter.count++;
    await repository.update(counter);
    if (counter.oldVersion !== before + 1) throw new Error(`update left version ${counter.oldVersion} after ${before}`);
    done++;
    return [counter.id, counter.oldVersion];
  };
  return { update, done: () => done };
}

export async function loadAggregates(repository, prefix) {
  const aggregates = [];
  for (let i = 0; i < WRITERS * PER_WRITER; i++) {
    const counter = new Counter(`${prefix}${i}`, `counter ${i}`);
    await repository.insert(counter);
    aggregates.push(await repository.findById(counter.id));
  }
  return aggregates;
}

/** Claims and acks everything pending in `store`; resolves the number of events taken. */
export async function drain(store) {
  let taken = 0;
  for (;;) {
    const claims = await store.claim({ owner: OWNER, limit: 500, leaseMs: 60_000, now: Date.now() });
    if (claims.length === 0) return taken;
    const ids = claims.flatMap((claim) => claim.events.map((record) => record.eventId));
    const acked = await store.ack(OWNER, ids);
    if (acked !== ids.length) throw new Error(`ack removed ${acked} of ${ids.length} claimed events`);
    taken += acked;
  }
}

/**
 * `writers` paced writers making `rate` writes per second between them for `ms` (writer w one
 * write every period, offset by w/writers of it): `write(w)` resolves once its write committed.
 * Resolves to each write's result with the time its call resolved and the time it was issued
 * (`[result, resolvedAt, issuedAt]`, performance.now()), and how many started late.
 */
export async function pacedWrites({ writers, rate, ms, write }) {
  const periodMs = (1000 * writers) / rate;
  const begin = performance.now();
  const committed = [];
  let late = 0;
  await Promise.all(
    Array.from({ length: writers }, async (_, w) => {
      for (let k = 0; ; k++) {
        const due = begin + (w / writers) * periodMs + k * periodMs;
        if (due > begin + ms) return;
        const wait = due - performance.now();
        if (wait > 0) await sleep(wait);
        else late++;
        const issuedAt = performance.now();
        const result = await write(w);
        committed.push([result, performance.now(), issuedAt]);
      }
    }),
  );
  return { committed, late, begin, seconds: (performance.now() - begin) / 1000 };
}
