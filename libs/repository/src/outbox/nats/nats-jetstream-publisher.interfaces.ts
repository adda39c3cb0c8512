import type { JetStreamClient } from '@nats-io/jetstream';
import type { DataSyncEvent } from '../../data-sync/data-sync-event.js';

export interface NatsJetStreamPublisherOptions {
  /** The JetStream client to publish with (`jetstream(connection)`); the caller owns and closes its connection. */
  jetstream: JetStreamClient;
  /**
   * The subject of an event: a function of the event, or the first token of the default
   * `<prefix>.<aggregate>.<type>` (default prefix `ddd-kit`). A stream must capture it
   * (e.g. `ddd-kit.>`), or every publish fails and the event stays pending.
   */
  subject?: string | ((event: DataSyncEvent) => string);
  /** The event's bytes on the wire; default UTF-8 JSON of the event. */
  serialize?: (event: DataSyncEvent) => Uint8Array | string;
  /** How long to wait for the stream's acknowledgement, in ms (default: the client's timeout). */
  timeoutMs?: number;
  /** When set, the server refuses the message unless this stream stores it (a misrouted subject fails loudly). */
  expectStream?: string;
}

/** What the stream answered for one event. */
export interface NatsPublishResult {
  readonly eventId: string;
  readonly subject: string;
  readonly stream: string;
  readonly seq: number;
  /** True when the stream already held a message with this event id (inside its duplicate window): nothing was added. */
  readonly duplicate: boolean;
}
