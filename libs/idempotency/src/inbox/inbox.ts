import { IdempotencyArgumentError } from '../errors.js';
import type { IdempotencyOutcome, IdempotencyStore } from '../idempotency.interfaces.js';

export interface InboxOptions {
  /**
   * Who consumes: each consumer of one event runs its handler once (a welcome mail and a
   * read model both see the event). Default `'default'`.
   */
  consumer?: string;
  /** How long the event is recognised, in milliseconds; default the store's (24 hours). Longer than the broker redelivers. */
  ttlMs?: number;
}

/** The store key of an event for a consumer: apart from HTTP keys, and from other consumers'. */
export function inboxKey(consumer: string, eventId: string): string {
  return `inbox:${consumer.length}:${consumer}:${eventId}`;
}

/**
 * Runs `handler` once per event: a redelivered event (the same `eventId`, as a broker delivering
 * at least once sends it again) resolves `{ replayed: true }` with the first result and no second
 * effect. While the first delivery is still being handled, IdempotencyInProgressError (put it
 * back: nak with a delay). On PostgresIdempotencyStore the record joins the handler's own
 * transaction (or the store runs the handler in one), so "handled" and "recorded" commit together.
 *
 *   @OnDataSync(User)
 *   onUser(events: DataSyncEvent[]) {
 *     return Promise.all(events.map((e) => inbox(this.store, e.eventId, () => this.sendWelcome(e), { consumer: 'welcome' })));
 *   }
 */
export function inbox<R>(
  store: IdempotencyStore,
  eventId: string,
  handler: () => Promise<R>,
  options: InboxOptions = {},
): Promise<IdempotencyOutcome<R>> {
  const { consumer = 'default', ttlMs } = options ?? {};
  if (typeof consumer !== 'string' || consumer.length === 0 || consumer.length > 120)
    return Promise.reject(
      new IdempotencyArgumentError('inbox: consumer must be a non-empty string of at most 120 characters'),
    );
  if (typeof eventId !== 'string' || eventId.length === 0)
    return Promise.reject(new IdempotencyArgumentError('inbox: an event needs a non-empty eventId to be recognised'));
  // The event ID is the whole request: the fingerprint can never differ for one key.
  const key = inboxKey(consumer, eventId);
  return store.run({ key, fingerprint: key, ...(ttlMs !== undefined ? { ttlMs } : {}) }, handler);
}
