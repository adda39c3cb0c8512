// `@ddd-kit/repository/nats`: data-sync events to NATS JetStream. A subpath of its own so that
// only applications that publish to NATS install @nats-io/jetstream (an optional peer).
export { NatsJetStreamPublisher } from './nats-jetstream.publisher.js';
export { NatsPublishError } from '../../errors.js';
export { DEFAULT_NATS_SUBJECT_PREFIX, isPublishableSubject } from './nats-subject.utils.js';
export type { NatsJetStreamPublisherOptions, NatsPublishResult } from './nats-jetstream-publisher.interfaces.js';
