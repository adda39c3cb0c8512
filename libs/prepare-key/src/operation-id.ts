import { randomBytes } from 'node:crypto';

// An operation id names one call's write, so that a resent command can recognise its own
// earlier effect. 72 random bits per process (unique among processes in practice) and a
// counter (unique within one): cheap enough for the prepare hot path, unlike a UUID per call.
const PROCESS_TAG = randomBytes(9).toString('base64url');
let counter = 0;

export function newOperationId(): string {
  return `${PROCESS_TAG}${(++counter).toString(36)}`;
}
