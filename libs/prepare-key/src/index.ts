export { TTL_FOREVER, PreparedValue, toForever, toTtlAt } from './prepared-value.js';
export { PrepareKey } from './prepare-key.js';
export { PrepareKeyFactory } from './prepare-key.factory.js';
export type { PreparedRecord, RecordPage, StoredRecord } from './prepare-key.interfaces.js';
export { canonicalJson } from './canonical-json.js';
export { MAX_KEY_LENGTH } from './prepare-key.validation.js';
export { PrepareKeyArgumentError } from './errors/prepare-key-argument.error.js';
export { PrepareKeyStateError } from './errors/prepare-key-state.error.js';
