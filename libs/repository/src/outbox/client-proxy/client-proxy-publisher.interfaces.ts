import type { ClientProxy } from '@nestjs/microservices';
import type { DataSyncEvent } from '../../data-sync/data-sync-event.js';

/** How a publish counts as done (see ClientProxyPublisherOptions.mode). */
export type ClientProxyPublishMode = 'emit' | 'send';

/** What a ClientProxyPublisher is made with. */
export interface ClientProxyPublisherOptions {
  /** The client to publish with (`ClientsModule`, `ClientProxyFactory.create`); the caller owns and closes it. */
  client: Pick<ClientProxy, 'emit' | 'send'>;
  /**
   * The pattern of an event: a function of the event, or the prefix of the default
   * `<prefix>.<aggregate>` (default prefix `ddd-kit`). One pattern per aggregate keeps an
   * instance's upserts and purges in one Kafka topic or Redis channel, hence in order.
   */
  pattern?: string | ((event: DataSyncEvent) => string);
  /**
   * `'emit'` (default): done once the transport accepted the message (RabbitMQ: the broker's
   * publisher confirm; Redis: the PUBLISH reply; Kafka: the producer's acks). `'send'`: done once
   * a consumer's `@MessagePattern` handler answered; the only acknowledgement a transport
   * without storage (Redis pub/sub, TCP, NATS core) gives that someone got it.
   */
  mode?: ClientProxyPublishMode;
  /** How long one publish may take before it fails, in ms (default 10,000); the relay then retries it. */
  timeoutMs?: number;
  /**
   * What is handed to `emit`/`send` for an event. Default: the transport's record with the
   * event id as its message id and the instance as its ordering key where it has them
   * (ClientRMQ, ClientKafka, ClientMqtt; see `transportRecord`), else the event itself.
   */
  record?: (event: DataSyncEvent) => unknown;
}
