import { ClockBackwardsError, IdGeneratorOptionsError } from '../errors.js';
import type { AsyncIdGenerator, Clock, IdState, TimeBasedIdGenerator } from '../id-generator.interfaces.js';
import { clockWaits, generatorTelemetry, issued } from '../telemetry/id-generator.telemetry.js';
import { checkReading, monotonicNow, sleep } from './clock.utils.js';

export interface ClockSyncOptions {
  /**
   * The longest the synchronous `generate()` busy-waits (real time) for a clock that moved
   * back; default 5, at most 50: the event loop is blocked at most this long.
   */
  spinThresholdMs?: number;
  /**
   * A clock further behind than this is broken: ClockBackwardsError at once, no waiting.
   * Up to it, `generateAsync()` waits with timers; `generate()` waits up to spinThresholdMs.
   * Default 2,000.
   */
  brokenThresholdMs?: number;
}

const MAX_SPIN_THRESHOLD_MS = 50;
const CAUGHT_UP = 'caught_up';
/** Span attribute: how far behind the clock was when the wait began. */
const BACKWARDS_MS = 'ddd_kit.id_generator.clock.backwards_ms';

/**
 * Wraps a time-based generator and rides out a clock that moved backwards:
 *  - up to `brokenThresholdMs` behind, `generate()` busy-waits for the clock, but for at most
 *    `spinThresholdMs` of real time: small jumps are waited out; a clock still behind after
 *    that gets ClockBackwardsError rather than a blocked event loop;
 *  - `generateAsync()` waits with timers (the event loop stays free) up to `brokenThresholdMs`;
 *  - further behind than `brokenThresholdMs`: ClockBackwardsError at once from both.
 * The wrapped generator never issues an ID at or before its last one, so waiting preserves order
 * and uniqueness; it never "borrows" future time.
 */
export class ClockSync<G extends TimeBasedIdGenerator = TimeBasedIdGenerator>
  implements TimeBasedIdGenerator, AsyncIdGenerator
{
  readonly spinThresholdMs: number;
  readonly brokenThresholdMs: number;
  /** The wrapped generator (a subclass may move to another one, e.g. on a new machine ID). */
  protected inner: G;

  constructor(generator: G, options: ClockSyncOptions = {}) {
    if (!generator || typeof generator.generate !== 'function' || typeof generator.clock !== 'function') {
      throw new IdGeneratorOptionsError(
        'ClockSync wraps a time-based generator (SnowflakeId, SafeJsSnowflakeId, CosIdGenerator)',
      );
    }
    const spin = options.spinThresholdMs ?? 5;
    const broken = options.brokenThresholdMs ?? 2_000;
    if (typeof spin !== 'number' || !Number.isFinite(spin) || spin < 0 || spin > MAX_SPIN_THRESHOLD_MS) {
      throw new IdGeneratorOptionsError(
        `spinThresholdMs must be a number in [0, ${MAX_SPIN_THRESHOLD_MS}] (it blocks the event loop), got ${String(spin)}`,
      );
    }
    if (typeof broken !== 'number' || !Number.isFinite(broken) || broken < spin) {
      throw new IdGeneratorOptionsError(
        `brokenThresholdMs must be a finite number not below spinThresholdMs (${spin}), got ${String(broken)}`,
      );
    }
    this.spinThresholdMs = spin;
    this.brokenThresholdMs = broken;
    this.inner = generator;
    // Makes the ID counter known to an OpenTelemetry SDK registered by now.
    generatorTelemetry.instruments();
  }

  /** The wrapped generator. */
  get generator(): G {
    return this.inner;
  }

  get machineId(): number {
    return this.inner.machineId;
  }

  get clock(): Clock {
    return this.inner.clock;
  }

  get lastTimestamp(): number {
    return this.inner.lastTimestamp;
  }

  generate(): string {
    // The common case calls straight through: no closure, no extra frame; telemetry is one
    // increment (read by an observable counter).
    let id: string;
    try {
      id = this.inner.generate();
    } catch (error) {
      id = this.recover(error, this.generateOnce);
    }
    issued.generate++;
    return id;
  }

  generateAsync(): Promise<string> {
    return this.runAsync(this.generateOnce);
  }

  parse(id: string): IdState {
    return this.inner.parse(id);
  }

  /** Runs any generating call of the wrapped generator (e.g. `generateBigInt`) under the synchronous rules. */
  run<T>(generate: () => T): T {
    let id: T;
    try {
      id = generate();
    } catch (error) {
      id = this.recover(error, generate);
    }
    issued.generate++;
    return id;
  }

  private readonly generateOnce = (): string => this.inner.generate();

  private recover<T>(error: unknown, generate: () => T): T {
    if (!(error instanceof ClockBackwardsError)) throw error;
    const wait = generatorTelemetry.begin('id_generator.clock_wait', clockWaits, 'generate');
    wait?.span?.setAttribute(BACKWARDS_MS, error.backwardsMs);
    try {
      if (error.backwardsMs > this.brokenThresholdMs) {
        throw new ClockBackwardsError(
          error.lastTimestamp,
          error.currentTimestamp,
          `more than brokenThresholdMs (${this.brokenThresholdMs} ms): the clock is broken`,
        );
      }
      // The synchronous wait is bounded by real time, not by the size of the jump: a clock that
      // catches up within spinThresholdMs is waited out, whatever it jumped; one that does not
      // (a real clock far behind) fails after that long instead of blocking the event loop.
      this.spinUntil(error.lastTimestamp);
      const id = generate();
      wait?.end(CAUGHT_UP);
      return id;
    } catch (failure) {
      wait?.end('error', failure);
      throw failure;
    }
  }

  /** Runs a generating call, waiting (with timers, not a busy-wait) for a clock up to brokenThresholdMs behind. */
  async runAsync<T>(generate: () => T): Promise<T> {
    // One identity check: registers the ID counter with an SDK started after this was built.
    generatorTelemetry.instruments();
    try {
      const id = generate();
      issued.generateAsync++;
      return id;
    } catch (error) {
      if (!(error instanceof ClockBackwardsError)) throw error;
      const wait = generatorTelemetry.begin('id_generator.clock_wait', clockWaits, 'generate_async');
      wait?.span?.setAttribute(BACKWARDS_MS, error.backwardsMs);
      try {
        const id = await (wait === undefined
          ? this.waitAsync(generate, error)
          : wait.within(() => this.waitAsync(generate, error)));
        wait?.end(CAUGHT_UP);
        issued.generateAsync++;
        return id;
      } catch (failure) {
        wait?.end('error', failure);
        throw failure;
      }
    }
  }

  /** After `first` (a ClockBackwardsError), retries `generate` as the clock catches up. */
  private async waitAsync<T>(generate: () => T, first: ClockBackwardsError): Promise<T> {
    const started = monotonicNow();
    let error = first;
    for (;;) {
      const waited = monotonicNow() - started;
      if (error.backwardsMs + waited > this.brokenThresholdMs) {
        throw new ClockBackwardsError(
          error.lastTimestamp,
          error.currentTimestamp,
          `more than brokenThresholdMs (${this.brokenThresholdMs} ms): the clock is broken`,
        );
      }
      if (error.backwardsMs <= this.spinThresholdMs) this.spinUntil(error.lastTimestamp);
      else await sleep(error.backwardsMs);
      try {
        return generate();
      } catch (next) {
        if (!(next instanceof ClockBackwardsError)) throw next;
        error = next;
      }
    }
  }

  /** Busy-waits until the clock reaches `timestamp`; bounded by real time so an injected clock cannot hang it. */
  private spinUntil(timestamp: number): void {
    const clock = this.inner.clock;
    const deadline = monotonicNow() + this.spinThresholdMs + 1;
    for (;;) {
      if (checkReading(clock()) >= timestamp) return;
      if (monotonicNow() > deadline) {
        // Read once more: the process may have been paused (GC) since the last reading.
        const now = checkReading(clock());
        if (now >= timestamp) return;
        throw new ClockBackwardsError(
          timestamp,
          now,
          `still behind after a ${this.spinThresholdMs} ms synchronous wait (spinThresholdMs); generateAsync() waits up to brokenThresholdMs`,
        );
      }
    }
  }
}
