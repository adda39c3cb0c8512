import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * A user's secret: 32 bytes from the CSPRNG (256 bits), base64url-encoded (43 characters).
 * `POST /users` hands it out once; the app keeps only its SHA-256.
 *
 * Why a plain SHA-256 and not bcrypt/scrypt/argon2: a slow KDF protects low-entropy secrets
 * (passwords people choose) by making each guess expensive. This secret is not chosen by a
 * person: with 2^256 equally likely values, recovering it from a leaked hash means searching
 * a space no amount of hashing speed makes feasible, and since every secret is unique and
 * random there is nothing for a salt or a precomputed table to gain. A fast hash also keeps
 * every authenticated request cheap for the server.
 */
export const USER_SECRET_BYTES = 32;
export const USER_SECRET_PATTERN = /^[A-Za-z0-9_-]{43}$/;

export interface IssuedUserSecret {
  /** Returned to the client once, never stored. */
  secret: string;
  /** What the user aggregate keeps: hex SHA-256 of the secret. */
  hash: string;
}

export function issueUserSecret(): IssuedUserSecret {
  const secret = randomBytes(USER_SECRET_BYTES).toString('base64url');
  return { secret, hash: hashUserSecret(secret) };
}

export function hashUserSecret(secret: string): string {
  return digest(secret).toString('hex');
}

/**
 * Whether `secret` is the one whose hash is `storedHash`. The comparison is of the two
 * 32-byte digests with `timingSafeEqual`: its time does not depend on how many leading bytes
 * match, so response times tell an attacker nothing about the stored hash. (Lengths are
 * compared first; they are fixed and public.) A stored hash that is not a SHA-256 hex digest
 * (a user written before secrets existed) matches nothing.
 */
export function matchesUserSecret(secret: string, storedHash: unknown): boolean {
  if (typeof storedHash !== 'string' || !/^[0-9a-f]{64}$/.test(storedHash)) return false;
  return timingSafeEqual(digest(secret), Buffer.from(storedHash, 'hex'));
}

function digest(secret: string): Buffer {
  return createHash('sha256').update(secret, 'utf8').digest();
}
