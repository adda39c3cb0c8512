import { createHash, randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { isOperationTimeout } from '@ddd-kit/core/internal';
import { IdempotencyConflictError, IdempotencyInProgressError } from './errors.js';
import type { IdempotencyOutcome, IdempotencyRequest } from './idempotency.interfaces.js';
import { decodeResult, encodeResult } from './idempotency.validation.js';

/** What the first atomic step found for a key. */
export type BeginOutcome =
  | { readonly state: 'acquired' }
  | { readonly state: 'conflict' }
  | { readonly state: 'in-progress' }
  | { readonly state: 'done'; readonly result: string };

/**
 * The three state changes of a store kept beside the effect's store (memory, Redis), each one
 * atomic on the store and safe to repeat with the same token (a resent command answers as the
 * first did):
 *
 * - `begin`: absent (or expired) → in progress under `token` for `leaseMs`; in progress under
 *   the same token → acquired again; otherwise what is there.
 * - `complete`: in progress under `token` → done with `result` for `ttlMs`; done under `token`
 *   → true again; false when the token no longer holds (the lease ended and another took it).
 * - `release`: in progress under `token` → absent; anything else untouched.
 */
export interface LeasedRecords {
  begin(key: string, fingerprint: string, token: string, leaseMs: number): Promise<BeginOutcome>;
  complete(key: string, token: string, result: string, ttlMs: number): Promise<boolean>;
  release(key: string, token: string): Promise<void>;
}

/** The fingerprint as stored: a digest, so a record's size does not depend on what the caller hashes. */
export function fingerprintDigest(fingerprint: string): string {
  return createHash('sha256').update(fingerprint).digest('base64url');
}

const COMPLETE_ATTEMPTS = 3;

/**
 * `run` over leased records. Work starts only after `begin` acquired the key; a failed work
 * releases it; after the work succeeded, nothing releases it any more: when the result cannot be
 * recorded, the key stays in progress until its lease ends (the effect may have happened, so
 * no repeat may run it again meanwhile).
 */
export async function runLeased<R>(
  records: LeasedRecords,
  request: IdempotencyRequest,
  work: () => Promise<R>,
  times: { ttlMs: number; leaseMs: number },
): Promise<IdempotencyOutcome<R>> {
  const token = randomUUID();
  const fingerprint = fingerprintDigest(request.fingerprint);
  const begun = await records.begin(request.key, fingerprint, token, times.leaseMs);
  switch (begun.state) {
    case 'conflict':
      throw new IdempotencyConflictError();
    case 'in-progress':
      throw new IdempotencyInProgressError();
    case 'done':
      return { result: decodeResult<R>(begun.result), replayed: true };
  }

  let result: R;
  try {
    result = await work();
  } catch (error) {
    // If releasing fails too, the key stays in progress until the lease ends: safe, and the
    // caller learns what failed first.
    await records.release(request.key, token).catch(() => undefined);
    throw error;
  }

  const encoded = encodeResult(result);
  // Completing is safe to repeat (same token), so a fault on the way is retried a few times
  // before the outcome is left to the lease.
  for (let attempt = 1; ; attempt++) {
    try {
      // False: the lease ended before the work did and another run holds the key. The work did
      // happen here, so its result is still this caller's answer (see leaseMs in the README).
      await records.complete(request.key, token, encoded, times.ttlMs);
      return { result, replayed: false };
    } catch (error) {
      // A store that did not answer within its deadline would make each retry wait as long again.
      if (attempt >= COMPLETE_ATTEMPTS || isOperationTimeout(error)) throw error;
      await sleep(50 * attempt);
    }
  }
}
