export const DEFAULT_MONGO_COLLECTION_PREFIX = 'prepare_';
export const DEFAULT_MONGO_RETENTION_MS = 24 * 60 * 60 * 1000;
export const EXPIRE_AT_INDEX = 'prepare_key_expire_at';
/** MongoDB's limit on `<database>.<collection>` is 255 bytes; leave room for the database name. */
export const MAX_COLLECTION_NAME_LENGTH = 180;
/** Duplicate key: another writer inserted the same `_id` first. */
export const DUPLICATE_KEY_CODE = 11000;
