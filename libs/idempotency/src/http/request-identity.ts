import { createHash } from 'node:crypto';
import { configure } from 'safe-stable-stringify';

// Canonical JSON: keys sorted, so `{a,b}` and `{b,a}` are one body; what JSON cannot carry is refused.
const canonical = configure({ strict: true, circularValue: Error, bigint: false, deterministic: true });

const digest = (text: string) => createHash('sha256').update(text).digest('base64url');

/**
 * The store key and fingerprint of one HTTP request. The key is scoped to the caller (a digest
 * of the credentials and the client's key, so the store holds neither in the clear); the
 * fingerprint covers method, path with query, canonical body and the caller. Throws when the
 * body cannot be encoded (too deep, not JSON).
 */
export function requestIdentity(request: {
  key: string;
  credential: string;
  method: string;
  path: string;
  body: unknown;
}): { storeKey: string; fingerprint: string } {
  const caller = digest(`caller\n${request.credential}`);
  const body = request.body === undefined ? '' : canonical(request.body);
  return {
    storeKey: `http:${digest(`${caller}\n${request.key}`)}`,
    fingerprint: digest(JSON.stringify([request.method.toUpperCase(), request.path, body, caller])),
  };
}
