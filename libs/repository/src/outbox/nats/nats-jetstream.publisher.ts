import type { JetStreamClient, JetStreamPublishOptions } from '@nats-io/jetstream';
import { NatsPublishError, RepositoryConfigurationError } from '../../errors.js';
import type { DataSyncEvent } from '../../data-sync/data-sync-event.js';
import type { NatsJetStreamPublisherOptions, NatsPublishResult } from './nats-jetstream-publisher.interfaces.js';
import { DEFAULT_NATS_SUBJECT_PREFIX, isPublishableSubject } from './nats-subject.utils.js';
import { describeEvent } from '../event-description.js';

/**
 * Publishes data-sync events to NATS JetStream for consumers outside the process. Each message
 * carries `Nats-Msg-Id: <eventId>`, so a resend of the same event (a relay retrying after a
 * lost acknowledgement, two relays racing) is dropped by the stream inside its
 * `duplicate_window` and consumers see it once. Outside that window a resend is stored again:
 * consumers still de-duplicate by (aggregate, id, version), as every data-sync handler does.
 *
 * It is a destination for OutboxRelay (`deliver`) and an `@OnDataSync` handler body
 * (`handler`). A publish that is not acknowledged rejects, and the caller (the
 * relay) retries it: delivery is at least once, never "maybe".
 */
export class NatsJetStreamPublisher {
  private readonly jetstream: JetStreamClient;
  private readonly subjectOf: (event: DataSyncEvent) => string;
  private readonly serialize: (event: DataSyncEvent) => Uint8Array | string;
  private readonly timeoutMs: number | undefined;
  private readonly expectStream: string | undefined;

  constructor(options: NatsJetStreamPublisherOptions) {
    if (options === null || typeof options !== 'object' || typeof options.jetstream?.publish !== 'function') {
      throw new RepositoryConfigurationError(
        'NatsJetStreamPublisher needs { jetstream }: the client of jetstream(connection) from @nats-io/jetstream',
      );
    }
    this.jetstream = options.jetstream;
    const subject = options.subject ?? DEFAULT_NATS_SUBJECT_PREFIX;
    if (typeof subject === 'string') {
      if (!isPublishableSubject(subject)) {
        throw new RepositoryConfigurationError(
          `NatsJetStreamPublisher: the subject prefix '${subject}' is not a NATS subject (dot-separated tokens, no spaces, no * or >)`,
        );
      }
      this.subjectOf = (event) => `${subject}.${event.aggregate}.${event.type}`;
    } else if (typeof subject === 'function') {
      this.subjectOf = subject;
    } else {
      throw new RepositoryConfigurationError(
        'NatsJetStreamPublisher: subject must be a prefix string or a function of the event',
      );
    }
    this.serialize = options.serialize ?? ((event) => JSON.stringify(event));
    if (options.timeoutMs !== undefined && !(Number.isInteger(options.timeoutMs) && options.timeoutMs > 0)) {
      throw new RepositoryConfigurationError(
        `NatsJetStreamPublisher: timeoutMs must be a positive integer, got ${String(options.timeoutMs)}`,
      );
    }
    this.timeoutMs = options.timeoutMs;
    this.expectStream = options.expectStream;
  }

  /** The subject an event is published to. */
  subjectFor(event: DataSyncEvent): string {
    return this.subjectOf(event);
  }

  /**
   * Publishes one event and resolves once the stream has stored it (or had it already:
   * `duplicate`). Rejects, publishing nothing, for an event without an id or with a subject
   * NATS refuses; rejects when no acknowledgement arrives (the message may or may not be
   * stored: resend it, the stream drops the copy).
   */
  async publish(event: DataSyncEvent): Promise<NatsPublishResult> {
    const { subject, data, eventId } = this.prepare(event);
    const options: Partial<JetStreamPublishOptions> = { msgID: eventId };
    if (this.timeoutMs !== undefined) options.timeout = this.timeoutMs;
    if (this.expectStream !== undefined) options.expect = { streamName: this.expectStream };
    const ack = await this.jetstream.publish(subject, data, options);
    return { eventId, subject, stream: ack.stream, seq: ack.seq, duplicate: ack.duplicate };
  }

  /**
   * Publishes events one after another, in the order given (the order of versions for one
   * aggregate), and stops at the first failure: a later version never overtakes an earlier
   * one that is still to be retried. Every event is checked before the first is sent.
   */
  async publishAll(events: readonly DataSyncEvent[]): Promise<NatsPublishResult[]> {
    for (const event of events) this.prepare(event);
    const results: NatsPublishResult[] = [];
    for (const event of events) results.push(await this.publish(event));
    return results;
  }

  /** `publishAll` as a data-sync handler, e.g. the body of an `@OnDataSync` method. */
  readonly handler = (events: readonly DataSyncEvent[]): Promise<NatsPublishResult[]> => this.publishAll(events);

  /**
   * `publishAll` in the shape of OutboxRelay's `deliver` (aggregate name, one write's events):
   * the relay acks the events once the stream stored them, and retries (the stream drops the
   * copies) when it did not answer.
   */
  readonly deliver = async (_aggregate: string, events: readonly DataSyncEvent[]): Promise<void> => {
    await this.publishAll(events);
  };

  private prepare(event: DataSyncEvent): { subject: string; data: Uint8Array | string; eventId: string } {
    // Checked at run time too: an event built by hand (or by an older writer) may lack its id.
    const eventId = (event as Partial<DataSyncEvent> | undefined)?.eventId;
    if (typeof eventId !== 'string' || eventId.length === 0) {
      throw new NatsPublishError(
        `A data-sync event without an eventId cannot be published to JetStream (the stream de-duplicates on it): ${describeEvent(event)}`,
      );
    }
    const subject = this.subjectOf(event);
    if (typeof subject !== 'string' || !isPublishableSubject(subject)) {
      throw new NatsPublishError(
        `Event ${eventId} maps to '${String(subject)}', which is not a NATS subject (dot-separated tokens, no spaces, no * or >)`,
      );
    }
    let data: Uint8Array | string;
    try {
      data = this.serialize(event);
    } catch (cause) {
      throw new NatsPublishError(
        `Event ${eventId} could not be serialized: ${cause instanceof Error ? cause.message : String(cause)}`,
        { cause },
      );
    }
    return { subject, data, eventId };
  }
}
