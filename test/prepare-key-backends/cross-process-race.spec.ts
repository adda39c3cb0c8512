import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { toTtlAt } from '@ddd-kit/prepare-key';
import { uniqueName } from '../support/servers.js';
import { assertBuiltLib } from './support/built-lib.js';
import { openBackend, SHARED_BACKENDS } from './support/shared-backends.js';
import { killRunningWorkers, WorkerProcess } from './support/worker-process.js';

const PROCESSES = 3;
const CALLERS = 64;
const KEYS = 1_000;
/**
 * The keys are spread over a few key spaces (names): the contention is per key either way,
 * and the MongoDB emulator used in tests copies a whole collection on every write, so one
 * collection of 1,000 records would make its part of the race ten times slower.
 */
const NAMES = 10;
const TIMEOUT_MS = 30_000;

type Claim = { worker: number; caller: number; key: string };
type RaceResult = { type: 'done'; wins: Array<[number, number]>; started: number; finished: number };

beforeAll(() => {
  assertBuiltLib();
});

afterAll(async () => {
  await killRunningWorkers();
});

describe.each(SHARED_BACKENDS)('cross-process race on %s', (backend) => {
  it(
    `${PROCESSES} processes × ${CALLERS} callers on ${KEYS} keys (half held by expired records): exactly one winner per key, and get returns it`,
    async () => {
      const scope = uniqueName(`race_${backend}`);
      const name = 'sku';
      const { factory, close } = await openBackend(backend, scope);
      try {
        const spaces = Array.from({ length: NAMES }, (_, n) => factory.create<Claim | { former: string }>(`${name}-${n}`));
        const keys = Array.from({ length: KEYS }, (_, i) => ({ pk: spaces[i % NAMES], key: `key-${i}` }));
        // Every other key is held by a record that has already expired: free to take, but a
        // record the backend must overwrite, not insert.
        const expiredAt = Date.now() - 60_000;
        const seeded = await Promise.all(
          keys.filter((_, i) => i % 2 === 0).map(({ pk, key }) => pk.prepare(key, toTtlAt({ former: key }, expiredAt))),
        );
        expect(seeded.every(Boolean)).toBe(true);

        const workers = Array.from(
          { length: PROCESSES },
          (_, worker) =>
            new WorkerProcess('race.worker.mjs', { backend, scope, name, names: NAMES, keys: KEYS, callers: CALLERS, worker }),
        );
        await Promise.all(workers.map((w) => w.message('ready')));
        const at = Date.now() + 250;
        for (const w of workers) w.send({ type: 'go', at });
        const results = await Promise.all(workers.map((w) => w.message<RaceResult>('done', TIMEOUT_MS)));
        await Promise.all(workers.map((w) => w.exited));

        const winners: Claim[][] = keys.map(() => []);
        results.forEach(({ wins }, worker) => {
          for (const [i, caller] of wins) winners[i].push({ worker, caller, key: keys[i].key });
        });
        expect(keys.filter((_, i) => winners[i].length !== 1).map(({ key }) => key)).toEqual([]);

        const held = await Promise.all(keys.map(({ pk, key }) => pk.get(key)));
        expect(held).toEqual(winners.map(([winner]) => winner));
        // The processes really ran at the same time: some moment lies inside every one's race.
        expect(Math.max(...results.map((r) => r.started))).toBeLessThan(Math.min(...results.map((r) => r.finished)));
      } finally {
        await close();
      }
    },
    TIMEOUT_MS,
  );
});
