import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { ClockBackwardsError } from '../errors/clock-backwards.error.js';
import { IdGeneratorOptionsError } from '../errors/id-generator-options.error.js';
import { CosIdGenerator } from '../generators/cosid-generator.js';
import { SnowflakeId } from '../generators/snowflake-id.js';
import type { TimeBasedIdGenerator } from '../id-generator.interfaces.js';
import { OffsetClock } from '../__tests__/test-clocks.js';
import { ClockSync } from './clock-sync.js';

const SPIN = 5;
const BROKEN = 1_000;
/** Loose wall-time bound for "did not wait": the test machine is shared and may deschedule us. */
const PROMPT_MS = 150;

/** Runs every check both generators' IDs must pass: strictly increasing strings, no duplicate. */
function expectOrdered(ids: string[]): void {
  const unordered = ids.filter((id, k) => k > 0 && !(id > ids[k - 1]));
  expect(unordered).toEqual([]);
  expect(new Set(ids).size).toBe(ids.length);
}

const kinds: Array<[string, (clock: OffsetClock) => TimeBasedIdGenerator]> = [
  ['CosIdGenerator', (clock) => new CosIdGenerator({ machineId: 7, clock: clock.now })],
  ['SnowflakeId', (clock) => new SnowflakeId({ machineId: 7, clock: clock.now })],
];

describe.each(kinds)('ClockSync around %s (clock moved back)', (_name, make) => {
  async function setUp() {
    const clock = new OffsetClock();
    const sync = new ClockSync(make(clock), { spinThresholdMs: SPIN, brokenThresholdMs: BROKEN });
    const ids: string[] = [];
    for (let k = 0; k < 100; k++) ids.push(sync.generate());
    void new ClockBackwardsError(1, 0).stack; // the first error of a suite pays for source maps; not the case under test
    await Promise.resolve(); // a new synchronous run: the next ID reads the clock
    return { clock, sync, ids };
  }

  it('less than the spin threshold: the synchronous call waits it out (briefly) and stays in order', async () => {
    const { clock, sync, ids } = await setUp();
    clock.back(3);
    const started = performance.now();
    ids.push(sync.generate());
    const blocked = performance.now() - started;
    for (let k = 0; k < 100; k++) ids.push(sync.generate());
    expectOrdered(ids);
    expect(blocked).toBeLessThan(PROMPT_MS); // a bounded busy-wait
  });

  it('between the thresholds, a real clock: generate() gives up within spinThresholdMs (never blocks long), generateAsync() waits with a timer and stays in order', async () => {
    const { clock, sync, ids } = await setUp();
    const lastBefore = sync.lastTimestamp;
    clock.back(400);
    let thrown: unknown;
    const started = performance.now();
    try {
      sync.generate();
    } catch (error) {
      thrown = error;
    }
    expect(performance.now() - started).toBeLessThan(PROMPT_MS); // did not wait the 400 ms out
    expect(thrown).toBeInstanceOf(ClockBackwardsError);
    let timerRan = false;
    setTimeout(() => (timerRan = true), 5);
    ids.push(await sync.generateAsync());
    expect(timerRan).toBe(true); // the event loop ran while it waited
    // It waited until the moved-back clock passed its last ID: 400 ms less the time since that
    // ID was issued, so a fixed wall-time bound would depend on how fast the set-up ran.
    expect(clock.now()).toBeGreaterThanOrEqual(lastBefore);
    expect(sync.parse(ids[ids.length - 1]).timestamp).toBeGreaterThanOrEqual(lastBefore);
    for (let k = 0; k < 100; k++) ids.push(sync.generate());
    expectOrdered(ids);
  });

  it('between the thresholds, a clock that catches up within spinThresholdMs of real time: generate() waits it out', () => {
    // A clock that runs 50 ms per reading: 400 ms behind, it is back after 8 readings, long
    // before 5 ms of real time have passed (even on a machine busy enough to pause the process).
    let t = 1_750_000_000_000;
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
    const { clock, sync, ids } = await setUp();
    clock.back(BROKEN + 200);
    const started = performance.now();
    expect(() => sync.generate()).toThrow(/brokenThresholdMs/);
    await expect(sync.generateAsync()).rejects.toThrow(ClockBackwardsError);
    expect(performance.now() - started).toBeLessThan(PROMPT_MS);
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
          const sync = new ClockSync(make(clock), { spinThresholdMs: SPIN, brokenThresholdMs: BROKEN });
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
