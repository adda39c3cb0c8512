/** One request to run once: its key, what the request was, and how long its result is kept. */
export interface IdempotencyRequest {
  /** The request ID (an `Idempotency-Key`, an event ID): a non-empty string of at most 1,024 characters. */
  key: string;
  /**
   * What the request is (a hash of method, path, body and caller, the event ID itself): a repeat
   * of the key with another fingerprint is refused with IdempotencyConflictError. At most 1,024 characters.
   */
  fingerprint: string;
  /** How long the result is replayed, in milliseconds; default the store's (24 hours). */
  ttlMs?: number;
}

/** What `run` resolves: the result of the work, and whether it was replayed from the first run. */
export interface IdempotencyOutcome<R> {
  result: R;
  /** True when `work` did not run here: the result is the first run's. */
  replayed: boolean;
}

/**
 * Runs work at most once per key while the key is retained, and hands every repeat the first
 * result. Results are JSON values (stored as JSON; a replay gives an equal value, `undefined`
 * included).
 *
 * - A repeat with the same key and fingerprint after the work completed: `{ result, replayed: true }`.
 * - The same key with another fingerprint: IdempotencyConflictError (nothing runs).
 * - While the first still runs: IdempotencyInProgressError (nothing runs).
 * - When `work` rejects, nothing is kept: the error propagates and a repeat runs again.
 * - When the outcome is unknown (the result could not be recorded: a store fault on completion,
 *   a result that is no JSON value), the key stays in progress until its lease ends; never a second run meanwhile.
 */
export interface IdempotencyStore {
  run<R>(request: IdempotencyRequest, work: () => Promise<R>): Promise<IdempotencyOutcome<R>>;
}
