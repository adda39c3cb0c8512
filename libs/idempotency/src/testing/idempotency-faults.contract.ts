import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from '@jest/globals';
import { IdempotencyConflictError, IdempotencyInProgressError } from '../errors.js';
import type { IdempotencyStore } from '../idempotency.interfaces.js';

/**
 * Faults between a client and its store, as a fault-injecting proxy produces them:
 * - `lost-reply-resent`: the store acts, its reply is lost and the connection cut; the client
 *   reconnects and sends the command again (ioredis does this by default).
 * - `timeout`: the store acts, its reply comes after the client gave up waiting.
 * - `reset`: half the reply arrives, then the connection is reset (the client may resend).
 */
export type IdempotencyFault = 'lost-reply-resent' | 'timeout' | 'reset';

export const IDEMPOTENCY_FAULTS: readonly IdempotencyFault[] = ['lost-reply-resent', 'timeout', 'reset'];

export interface ArmedIdempotencyFault {
  /** Settles once the fault met its command. */
  fired: Promise<unknown>;
  cancel(): void;
}

/** How a store's contract run meets a fault. */
export interface IdempotencyFaultTarget {
  /** A store whose client is set up as one meeting `fault` would be, over the same records as the target's store. */
  open(fault: IdempotencyFault): Promise<{ store: IdempotencyStore; close(): Promise<void> }>;
  /** Arms `fault` on the `nth` command on a record the faulty store sends from now on (1: the run's first step). */
  arm(fault: IdempotencyFault, nth: number): ArmedIdempotencyFault;
}

/** How long a fault that met its command may take to say so (a target's `fired` may settle a little after the run). */
const FIRED_CEILING_MS = 5_000;

/** Which step of a run a fault meets: its first state change, or the completion after the work. */
const STEPS = [
  ['the first step', 1],
  ['the completion', 2],
] as const;

/**
 * Every answer is right or an error, and the work never runs twice: whatever the fault, the
 * run either resolves with the work's result (and a repeat replays it) or rejects, after which
 * a repeat replays, answers in progress, or runs the work only if it never ran — or, on a store
 * whose record commits with the effect (`atomicWithEffect`), if the failed run rolled back.
 */
export function describeIdempotencyFaults(
  target: () => { store: IdempotencyStore; faults?: IdempotencyFaultTarget } | undefined,
  faults: readonly IdempotencyFault[],
  key: () => string,
  atomicWithEffect = false,
): void {
  describe('faults between the client and the store', () => {
    const cases = faults.flatMap((fault) => STEPS.map(([step, nth]) => [fault, step, nth] as const));
    it.each(cases)('%s on %s: the answer is right or an error, never two runs', async (fault, _step, nth) => {
      const t = target();
      if (t?.faults === undefined) throw new Error('the contract target lists faults but gives no fault target');
      const faulty = await t.faults.open(fault);
      try {
        const k = key();
        let calls = 0;
        const work = async () => ({ run: ++calls });
        const armed = t.faults.arm(fault, nth);
        const first = await faulty.store.run({ key: k, fingerprint: 'f' }, work).then(
          (outcome) => ({ ok: true as const, outcome }),
          (error: unknown) => ({ ok: false as const, error }),
        );
        // The fault met its command (a test whose fault never fired would prove nothing). It
        // did so before the run answered, so `fired` has settled by now; the ceiling only turns
        // a fault that never fired into a failure that says so.
        const ceiling = new AbortController();
        const fired = await Promise.race([
          armed.fired.then(() => true),
          sleep(FIRED_CEILING_MS, false, { signal: ceiling.signal }).catch(() => false),
        ]);
        ceiling.abort();
        armed.cancel();
        expect(fired).toBe(true);
        expect(calls).toBeLessThanOrEqual(1);
        if (first.ok) expect(first.outcome).toEqual({ result: { run: 1 }, replayed: false });
        // The key was free: a run never turns its own resent step into "in progress" or "conflict".
        else {
          expect(first.error).not.toBeInstanceOf(IdempotencyInProgressError);
          expect(first.error).not.toBeInstanceOf(IdempotencyConflictError);
        }

        const ranBefore = calls;
        const repeat = await t.store.run({ key: k, fingerprint: 'f' }, work).then(
          (outcome) => ({ ok: true as const, outcome }),
          (error: unknown) => ({ ok: false as const, error }),
        );
        if (first.ok) {
          // Recorded: the repeat gets the first result, whatever was lost on the way.
          expect(repeat).toEqual({ ok: true, outcome: { result: { run: 1 }, replayed: true } });
        } else if (repeat.ok) {
          // Either replayed (the completion was applied) or run now: because it never ran, or
          // (a store that commits with the effect) because the failed run rolled back with it.
          if (repeat.outcome.replayed) expect(repeat.outcome.result).toEqual({ run: 1 });
          else if (!atomicWithEffect) expect(ranBefore).toBe(0);
        } else {
          expect(repeat.error).toBeInstanceOf(IdempotencyInProgressError);
        }
        if (!atomicWithEffect) expect(calls).toBeLessThanOrEqual(1);
      } finally {
        await faulty.close();
      }
    });
  });
}
