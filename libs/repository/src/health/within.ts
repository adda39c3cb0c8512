import { withDeadline } from '@ddd-kit/core/internal';

/** `work`, or a rejection naming the deadline when it has not settled within `ms` (core's one deadline). */
export function within<T>(ms: number, work: Promise<T>): Promise<T> {
  // A late answer (or failure) of the store is of no interest once the deadline passed.
  work.catch(() => undefined);
  return withDeadline(work, ms);
}
