import { ClockSync, type ClockSyncOptions } from '../clock/clock-sync.js';
import { monotonicNow } from '../clock/clock.utils.js';
import { MachineIdLeaseExpiredError, MachineIdLostError } from '../errors.js';
import type { AsyncIdGenerator, IdGenerator, TimeBasedIdGenerator } from '../id-generator.interfaces.js';
import type { HeldMachineId, MachineIdHolder } from '../machine/machine-id-holder.js';

/** How long a generateAsync() waits for a lease by default: ClockSync's default brokenThresholdMs. */
const DEFAULT_LEASE_WAIT_MS = 2_000;

/**
 * Runs `attempt`; when it fails because the lease is expired or the machine ID lost, waits (up to
 * `budgetMs` in all) until the holder can issue IDs again — a heartbeat got through, or a new
 * machine ID was acquired and the generators moved to it — and tries again.
 */
export async function withLease<T>(holder: MachineIdHolder, budgetMs: number, attempt: () => Promise<T>): Promise<T> {
  const started = monotonicNow();
  for (;;) {
    try {
      return await attempt();
    } catch (error) {
      if (!(error instanceof MachineIdLeaseExpiredError || error instanceof MachineIdLostError)) throw error;
      const left = budgetMs - (monotonicNow() - started);
      if (left <= 0 || !(await holder.whenUsable(left))) throw error;
    }
  }
}

/**
 * A ClockSync around a generator built on the holder's machine ID, rebuilt on each machine ID the
 * holder acquires in place of a lost one. The switch is one assignment between two calls: every
 * ID comes whole from one generator, and the old one (its lease ended) never issues again.
 * `generateAsync()` also waits, within `brokenThresholdMs`, for a lease renewal or replacement.
 */
export class HeldClockSync<G extends TimeBasedIdGenerator> extends ClockSync<G> {
  constructor(
    private readonly holder: MachineIdHolder,
    build: (held: HeldMachineId) => G,
    options?: ClockSyncOptions,
  ) {
    super(build(holder.current), options);
    holder.track(this.inner);
    holder.onMachineId((held) => {
      const next = build(held);
      holder.track(next);
      this.inner = next;
    });
  }

  override generateAsync(): Promise<string> {
    return withLease(this.holder, this.brokenThresholdMs, () => super.generateAsync());
  }
}

/**
 * The generator a definition function made on the holder's machine ID, behind a proxy that moves
 * to the generator the same function makes for each replacement machine ID. The proxy is an
 * instance of the generator's class and offers its whole API (`generateBigInt()`, `parse()`, …);
 * methods are bound to the current generator.
 */
export function followHolder<G extends TimeBasedIdGenerator>(
  first: G,
  holder: MachineIdHolder,
  rebuild: (held: HeldMachineId) => G | Promise<G>,
): G & AsyncIdGenerator {
  let current: G = first;
  let bound = new Map<PropertyKey, unknown>();
  holder.track(first);
  holder.onMachineId(async (held) => {
    const next = await rebuild(held);
    holder.track(next);
    current = next;
    bound = new Map();
  });
  const budget = (): number => {
    const threshold = (current as Partial<ClockSync>).brokenThresholdMs;
    return typeof threshold === 'number' ? threshold : DEFAULT_LEASE_WAIT_MS;
  };
  const generateAsync = (): Promise<string> =>
    withLease(holder, budget(), () => {
      const generator = current as G & Partial<AsyncIdGenerator>;
      return typeof generator.generateAsync === 'function'
        ? generator.generateAsync()
        : new Promise<string>((resolve) => resolve(generator.generate()));
    });
  return new Proxy(first as G & AsyncIdGenerator, {
    get(_target, property) {
      if (property === 'generateAsync') return generateAsync;
      const value: unknown = Reflect.get(current, property, current);
      if (typeof value !== 'function') return value;
      let method = bound.get(property);
      if (method === undefined) {
        method = (value as (...args: unknown[]) => unknown).bind(current);
        bound.set(property, method);
      }
      return method;
    },
    set: (_target, property, value) => Reflect.set(current, property, value, current),
    has: (_target, property) => property === 'generateAsync' || Reflect.has(current, property),
    getPrototypeOf: () => Reflect.getPrototypeOf(current),
  });
}

/** True for a time-based generator on the holder's current machine ID (one to report and to move). */
export function isOnMachineId(generator: IdGenerator, machineId: number): generator is TimeBasedIdGenerator {
  const timed = generator as IdGenerator & Partial<TimeBasedIdGenerator>;
  return timed.machineId === machineId && typeof timed.lastTimestamp === 'number';
}
