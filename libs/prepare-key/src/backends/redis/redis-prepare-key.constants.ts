export const DEFAULT_REDIS_PREFIX = 'ddd-kit:prepare';
export const DEFAULT_REDIS_RETENTION_MS = 24 * 60 * 60 * 1000;
/** Passed as the drop time of a record that Redis must never expire. */
export const NO_EXPIRY = '0';
