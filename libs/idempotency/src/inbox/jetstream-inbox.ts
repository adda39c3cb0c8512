import { IdempotencyArgumentError, IdempotencyInProgressError } from '../errors.js';
import type { IdempotencyStore } from '../idempotency.interfaces.js';
import { inbox, type InboxOptions } from './inbox.js';

/** The parts of a JetStream message (`JsMsg` of @nats-io/jetstream) the inbox uses. */
export interface InboxJetStreamMessage {
  readonly headers?: { get(name: string): string };
  ack(): void;
  nak(millis?: number): void;
}

export interface JetStreamInboxOptions extends InboxOptions {
  /** The event ID of a message; default its `Nats-Msg-Id` header (NatsJetStreamPublisher sets it to the eventId). */
  eventId?: (message: InboxJetStreamMessage) => string | undefined;
  /** How long a message whose first delivery is still being handled waits before its next delivery; default 1,000 ms. */
  inProgressDelayMs?: number;
}

/** What became of one message. */
export type JetStreamInboxOutcome = 'handled' | 'replayed' | 'in-progress';

/**
 * Handles one JetStream message at most once per event: the handler runs through `inbox` under
 * the message's event ID; the message is acknowledged once the handler's result is recorded (or
 * was already: a redelivery, which the handler never sees); while the first delivery is still
 * being handled, it is put back with a delay. A handler that fails gets the message put back
 * (a redelivery runs it again: nothing was recorded) and its error propagates.
 *
 *   for await (const message of await consumer.consume()) {
 *     await handleJetStreamMessage(store, message, () => sendWelcome(message.json()), { consumer: 'welcome' });
 *   }
 */
export async function handleJetStreamMessage(
  store: IdempotencyStore,
  message: InboxJetStreamMessage,
  handler: () => Promise<unknown>,
  options: JetStreamInboxOptions = {},
): Promise<JetStreamInboxOutcome> {
  const {
    eventId: eventIdOf = (m: InboxJetStreamMessage) => m.headers?.get('Nats-Msg-Id'),
    inProgressDelayMs = 1_000,
  } = options;
  const eventId = eventIdOf(message);
  if (typeof eventId !== 'string' || eventId.length === 0)
    throw new IdempotencyArgumentError(
      'handleJetStreamMessage: the message has no event ID (no Nats-Msg-Id header; publish with msgID, or pass options.eventId)',
    );
  let outcome: { replayed: boolean };
  try {
    outcome = await inbox(store, eventId, handler, options);
  } catch (error) {
    if (error instanceof IdempotencyInProgressError) {
      message.nak(inProgressDelayMs);
      return 'in-progress';
    }
    message.nak();
    throw error;
  }
  message.ack();
  return outcome.replayed ? 'replayed' : 'handled';
}
