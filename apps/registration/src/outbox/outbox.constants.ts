/** The MongoOutboxStore the user repository writes its events into, or null when the repository is not MongoDB. */
export const MONGO_OUTBOX = Symbol('MONGO_OUTBOX');
/** The OutboxRelay that delivers the MongoOutboxStore's events, or null when the repository is not MongoDB. */
export const MONGO_OUTBOX_RELAY = Symbol('MONGO_OUTBOX_RELAY');
