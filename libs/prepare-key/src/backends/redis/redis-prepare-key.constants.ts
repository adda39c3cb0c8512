/** Used as given, like ioredis's own `keyPrefix` and RedisMachineIdDistributor's: it ends with its separator. */
export const DEFAULT_REDIS_KEY_PREFIX = 'ddd-kit:prepare:';
export const DEFAULT_REDIS_RETENTION_MS = 24 * 60 * 60 * 1000;
/** Passed as the drop time of a record that Redis must never expire. */
export const NO_EXPIRY = '0';
