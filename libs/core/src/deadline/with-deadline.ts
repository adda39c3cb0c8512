import { dddKitErrorCode, OperationTimeoutError } from '../errors.js';

/**
 * The deadline of one ddd-kit operation on a store when its module is given none: a store that
 * accepts the connection but does not answer (a paused VM, a full disk) costs a caller this
 * long, not the whole stall.
 */
export const DEFAULT_OPERATION_TIMEOUT_MS = 2_000;

/** True for an OperationTimeoutError of any installed copy of this package. */
export function isOperationTimeout(error: unknown): boolean {
  return dddKitErrorCode(error) === 'OPERATION_TIMEOUT';
}

/**
 * `work`, or a rejection with OperationTimeoutError once `ms` milliseconds have passed without it
 * settling. `work` itself is not cancelled (a promise cannot be): a late answer or failure is
 * dropped. `Infinity` returns `work` as it is (no deadline).
 */
export function withDeadline<T>(work: Promise<T>, ms: number, what?: string): Promise<T> {
  if (ms === Number.POSITIVE_INFINITY) return work;
  // A plain pair of callbacks rather than Promise.race: this runs on every store operation.
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new OperationTimeoutError(what, ms)), ms);
    work.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}

/**
 * Why `value` cannot be an `operationTimeoutMs` (a positive integer number of milliseconds, or
 * `Infinity` for no deadline), or undefined when it can. Each module wraps it in its own options
 * error.
 */
export function operationTimeoutProblem(value: unknown): string | undefined {
  if (value === Number.POSITIVE_INFINITY) return undefined;
  if (typeof value === 'number' && Number.isSafeInteger(value) && value > 0) return undefined;
  return `operationTimeoutMs must be a positive integer number of milliseconds (or Infinity for no deadline), got ${String(value)}`;
}
