// `@ddd-kit/repository/client-proxy`: data-sync events through a @nestjs/microservices client
// (RabbitMQ, Kafka, Redis, MQTT, …). A subpath of its own so that only applications that use it
// install @nestjs/microservices (an optional peer).
export { ClientProxyPublisher, DEFAULT_CLIENT_PROXY_PATTERN_PREFIX } from './client-proxy.publisher.js';
export { orderingKey, transportRecord } from './client-proxy-record.js';
export { ClientProxyPublishError } from '../../errors.js';
export type { ClientProxyPublisherOptions, ClientProxyPublishMode } from './client-proxy-publisher.interfaces.js';
