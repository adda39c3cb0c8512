import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

const VERSION = 'v1';
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** What the key of one sealed response is derived from: only the same caller, with the same key, derives it again. */
export interface SealingContext {
  secret: Buffer;
  credential: string;
  key: string;
  /** Bound to the ciphertext (a sealed body moved to another record does not open). */
  fingerprint: string;
}

function derive(context: SealingContext): Buffer {
  // HKDF-SHA256: the server secret is the input key material; the caller's credentials and the
  // client's key (neither kept by the store) are the info, so reading the store and the secret
  // is not enough to open a record.
  const info = Buffer.from(`ddd-kit idempotency ${VERSION}\n${context.credential}\n${context.key}`);
  return Buffer.from(hkdfSync('sha256', context.secret, Buffer.alloc(0), info, 32));
}

/** Encrypts a JSON value with AES-256-GCM; the result is `v1.<base64url(iv | tag | ciphertext)>`. */
export function seal(value: unknown, context: SealingContext): string {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', derive(context), iv);
  cipher.setAAD(Buffer.from(context.fingerprint));
  const ciphertext = Buffer.concat([cipher.update(JSON.stringify(value), 'utf8'), cipher.final()]);
  return `${VERSION}.${Buffer.concat([iv, cipher.getAuthTag(), ciphertext]).toString('base64url')}`;
}

/** The value `seal` encrypted; throws when the context differs or the text was altered. */
export function unseal(sealed: string, context: SealingContext): unknown {
  if (!sealed.startsWith(`${VERSION}.`)) throw new Error('unknown sealed format');
  const bytes = Buffer.from(sealed.slice(VERSION.length + 1), 'base64url');
  const decipher = createDecipheriv('aes-256-gcm', derive(context), bytes.subarray(0, IV_BYTES));
  decipher.setAAD(Buffer.from(context.fingerprint));
  decipher.setAuthTag(bytes.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
  const plain = Buffer.concat([decipher.update(bytes.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]);
  return JSON.parse(plain.toString('utf8'));
}
