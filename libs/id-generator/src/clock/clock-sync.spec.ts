import { afterEach, describe, expect, it, jest } from '@jest/globals';
import fc from 'fast-check';
import { ClockBackwardsError, IdGeneratorOptionsError } from '../errors.js';
import { CosIdGenerator } from '../generators/cosid-generator.js';
import { SnowflakeId } from '../generators/snowflake-id.js';
import type { TimeBasedIdGenerator } from '../id-generator.interfaces.js';
import { OffsetClock, SteppingClock } from '../__tests__/test-clocks.js';
import { ClockSync } from './clock-sync.js';

const SPIN = 5;
const BROKEN = 1_000;
const T0 = 1_750_000_000_000;
/** How far the monotonic clock moves with each reading (see steppingMonotonic). */
const STEP = 0.01;

/** Runs every check both generators' IDs must pass: strictly increasing strings, no duplicate. */
function expectOrdered(ids: string[]): void {
  const unordered = ids.filter((id, k) => k > 0 && !(id > ids[k - 1]));
  expect(unordered).toEqual([]);
  expect(new Set(ids).size).toBe(ids.length);
}

/**
 * The real-time clock ClockSync bounds its busy-wait with (performance.now()), replaced for one
 * case: each reading moves it on by `stepMs`. A wait then lasts as long as its readings say, and
 * a busy machine pausing the process mid-wait changes nothing.
 */
function steppingMonotonic(stepMs: number): { read(): number } {
  let t = 0;
  jest.spyOn(performance, 'now').mockImplementation(() => (t += stepMs));
  return { read: () => t };
}

afterEach(() => {
  jest.restoreAllMocks();
  jest.useRealTimers();
});

const kinds: Array<[string, (clock: () => number) => TimeBasedIdGenerator]> = [
  ['CosIdGenerator', (clock) => new CosIdGenerator({ machineId: 7, clock })],
  ['SnowflakeId', (clock) => new SnowflakeId({ machineId: 7, clock })],
];

describe.each(kinds)('ClockSync around %s (clock moved back)', (_name, make) => {
  async function setUp(clock: () => number) {
    const sync = new ClockSync(make(clock), { spinThresholdMs: SPIN, brokenThresholdMs: BROKEN });
    const ids: string[] = [];
    for (let k = 0; k < 100; k++) ids.push(sync.generate());
    await Promise.resolve(); // a new synchronous run: the next ID reads the clock
    return { sync, ids };
  }

  it('less than the spin threshold: the synchronous call waits it out (briefly) and stays in order', async () => {
    const monotonic = steppingMonotonic(STEP);
    // A wall clock that moves on 1 ms every 10 readings: 3 ms behind, it is back after 30.
    const clock = new SteppingClock(T0, 10);
    const { sync, ids } = await setUp(clock.now);
    const lastBefore = sync.lastTimestamp;
    clock.back(3);
    const started = monotonic.read();
    ids.push(sync.generate());
    // It waited only until the clock was back: a few dozen readings, far less than spinThresholdMs.
    expect(monotonic.read() - started).toBeLessThan(1);
    expect(sync.parse(ids[ids.length - 1]).timestamp).toBeGreaterThanOrEqual(lastBefore);
    for (let k = 0; k < 100; k++) ids.push(sync.generate());
    expectOrdered(ids);
  });

  it('between the thresholds, a real clock: generate() gives up within spinThresholdMs (never blocks long), generateAsync() waits with a timer and stays in order', async () => {
    // Wall time and timers are Jest's: the clock stands still unless timers run, and the wait of
    // 400 ms takes none. The busy-wait's bound runs on the stepping monotonic clock.
    jest.useFakeTimers({ doNotFake: ['performance', 'nextTick', 'queueMicrotask', 'setImmediate'] });
    const monotonic = steppingMonotonic(STEP);
    const clock = new OffsetClock();
    const { sync, ids } = await setUp(clock.now);
    const lastBefore = sync.lastTimestamp;
    clock.back(400);
    const started = monotonic.read();
    expect(() => sync.generate()).toThrow(ClockBackwardsError);
    // It gave up after spinThresholdMs (and the one extra millisecond of its bound), not later.
    expect(monotonic.read() - started).toBeLessThanOrEqual(SPIN + 1 + 3 * STEP);
    let timerRan = false;
    setTimeout(() => (timerRan = true), 5);
    const waited = sync.generateAsync();
    await jest.advanceTimersByTimeAsync(400);
    ids.push(await waited);
    expect(timerRan).toBe(true); // the event loop ran while it waited
    // It waited until the moved-back clock passed its last ID.
    expect(clock.now()).toBeGreaterThanOrEqual(lastBefore);
    expect(sync.parse(ids[ids.length - 1]).timestamp).toBeGreaterThanOrEqual(lastBefore);
    for (let k = 0; k < 100; k++) ids.push(sync.generate());
    expectOrdered(ids);
  });

  it('between the thresholds, a clock that catches up within spinThresholdMs of real time: generate() waits it out', () => {
    steppingMonotonic(STEP);
    // A clock that runs 50 ms per reading: 400 ms behind, it is back after 8 readings, long
    // before spinThresholdMs of (stepping) real time has passed.
    let t = T0;
    const clock = () => (t += 50);
    const sync = new ClockSync(new CosIdGenerator({ machineId: 9, clock }), {
      spinThresholdMs: 5,
      brokenThresholdMs: 1_000,
    });
    const before = [sync.generate(), sync.generate()];
    const lastBefore = sync.lastTimestamp;
    t -= 400;
    const after = sync.generate();
    expect(sync.parse(after).timestamp).toBeGreaterThan(lastBefore);
    expectOrdered([...before, after, sync.generate()]);
    t -= 1_500; // beyond brokenThresholdMs: no waiting at all
    expect(() => sync.generate()).toThrow(ClockBackwardsError);
  });

  it('beyond the broken threshold: both throw at once, nothing is issued', async () => {
    const monotonic = steppingMonotonic(STEP);
    const clock = new OffsetClock();
    const { sync, ids } = await setUp(clock.now);
    clock.back(BROKEN + 200);
    const started = monotonic.read();
    expect(() => sync.generate()).toThrow(/brokenThresholdMs/);
    expect(monotonic.read() - started).toBe(0); // no busy-wait
    let turned = false;
    setImmediate(() => (turned = true));
    await expect(sync.generateAsync()).rejects.toThrow(ClockBackwardsError);
    expect(turned).toBe(false); // rejected before the event loop turned: no timer either
    clock.back(-(BROKEN + 200)); // the clock is fixed
    ids.push(await sync.generateAsync());
    expectOrdered(ids);
  });

  it('random jumps back and forth: never a duplicate, never out of order', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(fc.integer({ min: 0, max: 30 }), fc.integer({ min: 1, max: 300 })), {
          minLength: 1,
          maxLength: 6,
        }),
        async (steps) => {
          const clock = new OffsetClock();
          const sync = new ClockSync(make(clock.now), { spinThresholdMs: SPIN, brokenThresholdMs: BROKEN });
          const ids: string[] = [];
          for (const [back, count] of steps) {
            clock.back(back);
            for (let k = 0; k < count; k++) {
              try {
                ids.push(sync.generate());
              } catch (error) {
                expect(error).toBeInstanceOf(ClockBackwardsError);
                ids.push(await sync.generateAsync());
              }
            }
            await Promise.resolve();
          }
          expectOrdered(ids);
        },
      ),
      { numRuns: 15 },
    );
  });
});

describe('ClockSync options', () => {
  it('refuses thresholds that would block the event loop or make no sense', () => {
    const generator = new CosIdGenerator({ machineId: 1 });
    expect(() => new ClockSync(generator, { spinThresholdMs: 500 })).toThrow(IdGeneratorOptionsError);
    expect(() => new ClockSync(generator, { spinThresholdMs: 10, brokenThresholdMs: 5 })).toThrow(
      IdGeneratorOptionsError,
    );
    expect(() => new ClockSync({ generate: () => 'x' } as never)).toThrow(IdGeneratorOptionsError);
  });

  it('the busy-wait is bounded: a clock that stays behind ends it with ClockBackwardsError', () => {
    let t = 1_750_000_000_000;
    const sync = new ClockSync(new SnowflakeId({ machineId: 1, clock: () => t }), { spinThresholdMs: SPIN });
    sync.generate();
    t -= 2; // and it never comes back
    expect(() => sync.generate()).toThrow(/still behind after a 5 ms synchronous wait/);
  });

  it('run() applies the rules to other generating calls (generateBigInt)', () => {
    const clock = new OffsetClock();
    const snowflake = new SnowflakeId({ machineId: 3, clock: clock.now });
    const sync = new ClockSync(snowflake, { spinThresholdMs: 40 });
    const first = sync.run(() => snowflake.generateBigInt());
    clock.back(30);
    expect(() => snowflake.generateBigInt()).toThrow(ClockBackwardsError); // unwrapped: it throws
    const second = sync.run(() => snowflake.generateBigInt()); // wrapped: it waits the 30 ms out
    expect(second).toBeGreaterThan(first);
  });
});
