import { lastValueFrom, throwError, timeout, type Observable } from 'rxjs';
import { ClientProxyPublishError, RepositoryConfigurationError } from '../../errors.js';
import type { DataSyncEvent } from '../../data-sync/data-sync-event.js';
import type { ClientProxyPublisherOptions, ClientProxyPublishMode } from './client-proxy-publisher.interfaces.js';
import { transportRecord } from './client-proxy-record.js';
import { errorText } from '../outbox-arguments.js';
import { describeEvent } from '../event-description.js';

/** The prefix of the default pattern `<prefix>.<aggregate>`. */
export const DEFAULT_CLIENT_PROXY_PATTERN_PREFIX = 'ddd-kit';

const DEFAULT_TIMEOUT_MS = 10_000;

/**
 * Publishes data-sync events through a `@nestjs/microservices` client (RabbitMQ, Kafka, Redis,
 * MQTT, NATS, TCP). A publish resolves once the client's Observable completed (`emit`: the
 * transport accepted the message; `send`: a consumer answered) and rejects when it errors or
 * takes longer than `timeoutMs`: as OutboxRelay's destination, an event is acked only after that,
 * and a failed publish is retried. A retry may send the same event again (its first publish may
 * have landed): consumers recognise it by its `eventId` (`inbox` of @ddd-kit/idempotency).
 */
export class ClientProxyPublisher {
  private readonly client: ClientProxyPublisherOptions['client'];
  private readonly patternOf: (event: DataSyncEvent) => string;
  private readonly recordOf: (event: DataSyncEvent) => unknown;
  private readonly mode: ClientProxyPublishMode;
  private readonly timeoutMs: number;

  constructor(options: ClientProxyPublisherOptions) {
    const client = (options as Partial<ClientProxyPublisherOptions> | null)?.client;
    if (typeof client?.emit !== 'function' || typeof client.send !== 'function') {
      throw new RepositoryConfigurationError(
        'ClientProxyPublisher needs { client }: a ClientProxy of @nestjs/microservices (ClientsModule, ClientProxyFactory.create)',
      );
    }
    this.client = client;
    const pattern = options.pattern ?? DEFAULT_CLIENT_PROXY_PATTERN_PREFIX;
    if (typeof pattern === 'string') {
      if (pattern.length === 0)
        throw new RepositoryConfigurationError('ClientProxyPublisher: the pattern prefix must not be empty');
      this.patternOf = (event) => `${pattern}.${event.aggregate}`;
    } else if (typeof pattern === 'function') {
      this.patternOf = pattern;
    } else {
      throw new RepositoryConfigurationError(
        'ClientProxyPublisher: pattern must be a prefix string or a function of the event',
      );
    }
    const record = options.record ?? ((event: DataSyncEvent) => transportRecord(client, event));
    if (typeof record !== 'function')
      throw new RepositoryConfigurationError('ClientProxyPublisher: record must be a function of the event');
    this.recordOf = record;
    const mode = options.mode ?? 'emit';
    if (mode !== 'emit' && mode !== 'send')
      throw new RepositoryConfigurationError(
        `ClientProxyPublisher: mode must be 'emit' or 'send', got ${String(mode)}`,
      );
    this.mode = mode;
    const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    if (!(Number.isSafeInteger(timeoutMs) && timeoutMs > 0))
      throw new RepositoryConfigurationError(
        `ClientProxyPublisher: timeoutMs must be a positive integer, got ${String(options.timeoutMs)}`,
      );
    this.timeoutMs = timeoutMs;
  }

  /** The pattern an event is published with. */
  patternFor(event: DataSyncEvent): string {
    return this.patternOf(event);
  }

  /**
   * Publishes one event. Rejects, publishing nothing, for an event without an id or a pattern
   * that is not a non-empty string; rejects when the client's Observable errors or does not
   * complete within `timeoutMs` (the message may or may not have gone: publish it again).
   */
  async publish(event: DataSyncEvent): Promise<void> {
    const { pattern, record, eventId } = this.prepare(event);
    let source: Observable<unknown>;
    try {
      source = this.mode === 'emit' ? this.client.emit(pattern, record) : this.client.send(pattern, record);
    } catch (cause) {
      throw new ClientProxyPublishError(`Event ${eventId} was not published: ${causeText(cause)}`, { cause });
    }
    try {
      await lastValueFrom(
        source.pipe(
          timeout({
            each: this.timeoutMs,
            with: () =>
              throwError(
                () =>
                  new ClientProxyPublishError(
                    `Event ${eventId} was not ${this.mode === 'emit' ? 'accepted by the transport' : 'answered by a consumer'} within ${this.timeoutMs} ms`,
                  ),
              ),
          }),
        ),
        { defaultValue: undefined },
      );
    } catch (cause) {
      if (cause instanceof ClientProxyPublishError) throw cause;
      throw new ClientProxyPublishError(`Event ${eventId} was not published: ${causeText(cause)}`, { cause });
    }
  }

  /**
   * Publishes events one after another, in the order given (the order of versions for one
   * aggregate), and stops at the first failure: a later version never overtakes an earlier
   * one that is still to be retried. Every event is checked before the first is sent.
   */
  async publishAll(events: readonly DataSyncEvent[]): Promise<void> {
    for (const event of events) this.prepare(event);
    for (const event of events) await this.publish(event);
  }

  /** `publishAll` as a data-sync handler, e.g. the body of an `@OnDataSync` method. */
  readonly handler = (events: readonly DataSyncEvent[]): Promise<void> => this.publishAll(events);

  /** `publishAll` in the shape of OutboxRelay's `deliver`: the relay acks the events once it resolved. */
  readonly deliver = (_aggregate: string, events: readonly DataSyncEvent[]): Promise<void> => this.publishAll(events);

  private prepare(event: DataSyncEvent): { pattern: string; record: unknown; eventId: string } {
    // Checked at run time too: an event built by hand (or by an older writer) may lack its id.
    const eventId = (event as Partial<DataSyncEvent> | undefined)?.eventId;
    if (typeof eventId !== 'string' || eventId.length === 0)
      throw new ClientProxyPublishError(
        `A data-sync event without an eventId cannot be published (consumers recognise a redelivery by it): ${describeEvent(event)}`,
      );
    const pattern = this.patternOf(event);
    if (typeof pattern !== 'string' || pattern.length === 0)
      throw new ClientProxyPublishError(
        `Event ${eventId} maps to the pattern ${String(pattern)}: not a non-empty string`,
      );
    let record: unknown;
    try {
      record = this.recordOf(event);
    } catch (cause) {
      throw new ClientProxyPublishError(`Event ${eventId} could not be made a message: ${causeText(cause)}`, { cause });
    }
    return { pattern, record, eventId };
  }
}

/**
 * A client's error as text: Nest's clients fail with an Error, a string, or an event object
 * (ClientRMQ's `{ err, url }` when no broker answers), whose Error is what tells why.
 */
function causeText(cause: unknown): string {
  const inner = (cause as { err?: unknown } | null)?.err;
  return errorText(inner ?? cause);
}
