import { DUPLICATE_KEY_CODE } from './mongo-prepare-key.constants.js';

const PLAIN = /^[A-Za-z0-9_-]*$/;

/**
 * A PrepareKey name as part of a collection name: letters, digits, `_` and `-` stay as they
 * are, everything else is percent-encoded (`$` and NUL are not allowed in collection names,
 * and distinct names must give distinct collections).
 */
export function encodeCollectionPart(name: string): string {
  return PLAIN.test(name) ? name : encodeURIComponent(name).replace(/[.!~'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

export function isDuplicateKeyError(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === DUPLICATE_KEY_CODE;
}
