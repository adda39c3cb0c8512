import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { toTtlAt } from '@ddd-kit/prepare-key';
import { uniqueName } from '../support/servers.js';
import { assertBuiltLib } from './support/built-lib.js';
import { LABELLED_BACKENDS, openBackend, type SharedBackend } from './support/shared-backends.js';
import { killRunningWorkers, WorkerProcess } from './support/worker-process.js';

const PROCESSES = 3;
/**
 * Every key is attempted by every caller of every process, and each key is a race of its own: a
 * store that is not atomic gives a key two winners whenever two attempts meet, which a hundred
 * or more attempts at once do on nearly every key. The shares below are measured over hundreds
 * of keys either way; with 300 keys on a machine under a load average above 20, all three
 * processes overlapped on about 80% of the keys and each won about a third of them, far above
 * what is required. The MongoDB-wire emulator used in tests copies a whole collection on every
 * write and answers about a thousand writes a second, so it races for fewer keys.
 */
const KEYS: Record<SharedBackend, number> = { redis: 300, cluster: 300, mongo: 50 };
/**
 * Callers a process. On the emulator, whose writes run one at a time, 16 a process (48
 * attempts a key) still overlap across all three processes on nearly every key (49 of 50 under
 * a load average above 20), at a quarter of the writes: a busy machine had stretched its 9,600
 * writes past a minute.
 */
const CALLERS: Record<SharedBackend, number> = { redis: 64, cluster: 64, mongo: 16 };
/**
 * The keys are spread over a few key spaces (names): the contention is per key either way, and
 * the emulator's per-write collection copy stays small.
 */
const NAMES = 10;
/**
 * Overlap: the share of keys on which attempts of at least two processes were in flight at one
 * instant (the server arbitrated between processes), and of keys on which all processes' were.
 * The barrier releases every process at once, but this machine may have fewer cores than the
 * processes and other work besides: a process is now and then woken a millisecond or two late,
 * after a rival's attempts have all been answered, so neither can be required for every key.
 * Without the barrier (processes walking the keys at their own pace), both fall to about zero.
 */
const MIN_OVERLAP_OF_TWO = 0.5;
const MIN_OVERLAP_OF_ALL = 0.02;
/** Each process must win at least this share of the keys (a fair race gives each about 1/3). */
const MIN_WIN_SHARE = 0.05;
const TIMEOUT_MS = 120_000;

type Claim = { worker: number; caller: number; key: string };
/** Per key: [first attempt's start, last attempt's end (epoch ms), attempts, winning callers]. */
type KeyAttempts = [number, number, number, number[]];
type RaceResult = { type: 'done'; attempts: KeyAttempts[] };

beforeAll(() => {
  assertBuiltLib();
});

afterAll(async () => {
  await killRunningWorkers();
});

describe.each(LABELLED_BACKENDS)('cross-process race on %s', (_label, backend) => {
  const keyCount = KEYS[backend];
  const callers = CALLERS[backend];
  it(
    `${PROCESSES} processes × ${callers} callers, all on each of ${keyCount} keys at once (half held by expired records): ` +
      'attempts overlap across processes, exactly one winner per key, wins spread over the processes, and get returns the winner',
    async () => {
      const scope = uniqueName(`race_${backend}`);
      const name = 'sku';
      const { factory, close } = await openBackend(backend, scope);
      try {
        const spaces = Array.from({ length: NAMES }, (_, n) =>
          factory.create<Claim | { former: string }>(`${name}-${n}`),
        );
        const keys = Array.from({ length: keyCount }, (_, i) => ({ pk: spaces[i % NAMES], key: `key-${i}` }));
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
            new WorkerProcess('race.worker.mjs', {
              backend,
              scope,
              name,
              names: NAMES,
              keys: keyCount,
              callers,
              worker,
              processes: PROCESSES,
            }),
        );
        await Promise.all(workers.map((w) => w.message('ready')));
        for (const w of workers) w.send({ type: 'go' });
        const results = await Promise.all(workers.map((w) => w.message<RaceResult>('done', TIMEOUT_MS)));
        await Promise.all(workers.map((w) => w.exited));

        // Every caller of every process attempted every key.
        for (const { attempts } of results) {
          expect(attempts).toHaveLength(keyCount);
          expect(attempts.filter(([, , n]) => n !== callers)).toEqual([]);
        }

        // Exactly one winner per key, among all PROCESSES × callers attempts.
        const winners: Claim[][] = keys.map(({ key }, i) =>
          results.flatMap(({ attempts }, worker) => attempts[i][3].map((caller) => ({ worker, caller, key }))),
        );
        expect(keys.filter((_, i) => winners[i].length !== 1).map(({ key }) => key)).toEqual([]);
        const held = await Promise.all(keys.map(({ pk, key }) => pk.get(key)));
        expect(held).toEqual(winners.map(([winner]) => winner));

        // Wins are spread over the processes: none is always first.
        const winsPerProcess = results.map(
          (_, worker) => winners.filter(([winner]) => winner.worker === worker).length,
        );
        const minWins = Math.ceil(keyCount * MIN_WIN_SHARE);
        expect(`wins per process: ${winsPerProcess.join(', ')}`).toBe(
          `wins per process: ${winsPerProcess.map((wins) => Math.max(wins, minWins)).join(', ')}`,
        );

        // The attempts on a key overlapped: some instant lies inside an attempt of each of two
        // processes, or of every process.
        const overlapping = (i: number, processes: number[]) =>
          Math.max(...processes.map((w) => results[w].attempts[i][0])) <
          Math.min(...processes.map((w) => results[w].attempts[i][1]));
        const all = results.map((_, w) => w);
        const pairs = all.flatMap((a) => all.filter((b) => b > a).map((b) => [a, b]));
        const overlapOfTwo = keys.filter((_, i) => pairs.some((pair) => overlapping(i, pair))).length;
        const overlapOfAll = keys.filter((_, i) => overlapping(i, all)).length;
        const atLeast = (count: number, share: number) => Math.max(count, Math.ceil(keyCount * share));
        expect(`two processes overlapped on ${overlapOfTwo}, all on ${overlapOfAll} of ${keyCount} keys`).toBe(
          `two processes overlapped on ${atLeast(overlapOfTwo, MIN_OVERLAP_OF_TWO)}, all on ${atLeast(overlapOfAll, MIN_OVERLAP_OF_ALL)} of ${keyCount} keys`,
        );
      } finally {
        await close();
      }
    },
    TIMEOUT_MS,
  );
});
