import { describe, expect, it, jest } from '@jest/globals';

// The comparison must go through crypto.timingSafeEqual: wrap the real one in a spy.
const crypto = await import('node:crypto');
const timingSafeEqual = jest.fn(crypto.timingSafeEqual);
jest.unstable_mockModule('node:crypto', () => ({
  ...crypto,
  default: { ...crypto, timingSafeEqual },
  timingSafeEqual,
}));
const { hashUserSecret, issueUserSecret, matchesUserSecret, USER_SECRET_PATTERN } = await import('./user-secret.js');

describe('user secrets', () => {
  it('issues 256 random bits as 43 base64url characters, and their SHA-256 as the hash to keep', () => {
    const issued = Array.from({ length: 100 }, () => issueUserSecret());
    for (const { secret, hash } of issued) {
      expect(secret).toMatch(USER_SECRET_PATTERN);
      expect(Buffer.from(secret, 'base64url')).toHaveLength(32);
      expect(hash).toBe(crypto.createHash('sha256').update(secret).digest('hex'));
      expect(hash).not.toContain(secret);
    }
    expect(new Set(issued.map((i) => i.secret)).size).toBe(100);
  });

  it('matches the secret of a hash and nothing else', () => {
    const { secret, hash } = issueUserSecret();
    const other = issueUserSecret();
    expect(matchesUserSecret(secret, hash)).toBe(true);
    expect(matchesUserSecret(other.secret, hash)).toBe(false);
    // One character off, at the end: a byte-by-byte compare of the secrets would stop late.
    const last = secret.at(-1) === 'A' ? 'B' : 'A';
    expect(matchesUserSecret(secret.slice(0, -1) + last, hash)).toBe(false);
    // A hash given as the secret is not the secret.
    expect(matchesUserSecret(hash, hash)).toBe(false);
  });

  it('compares the two digests with crypto.timingSafeEqual, whether they match or not', () => {
    const { secret, hash } = issueUserSecret();
    for (const [presented, expected] of [
      [secret, true],
      [issueUserSecret().secret, false],
    ] as const) {
      timingSafeEqual.mockClear();
      expect(matchesUserSecret(presented, hash)).toBe(expected);
      expect(timingSafeEqual).toHaveBeenCalledTimes(1);
      const [a, b] = timingSafeEqual.mock.calls[0] as unknown as [Buffer, Buffer];
      expect([a.length, b.length]).toEqual([32, 32]);
      expect(Buffer.from(b).toString('hex')).toBe(hash);
    }
  });

  it('matches nothing against a stored hash that is not a SHA-256 hex digest (a user stored before secrets)', () => {
    const { secret } = issueUserSecret();
    for (const stored of [
      undefined,
      null,
      '',
      'abc',
      hashUserSecret(secret).toUpperCase(),
      `${hashUserSecret(secret)}00`,
      42,
    ]) {
      expect(matchesUserSecret(secret, stored)).toBe(false);
    }
  });
});
