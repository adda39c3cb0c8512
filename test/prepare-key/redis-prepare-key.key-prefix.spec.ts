import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Redis } from 'ioredis';
import { PrepareKeyArgumentError, RedisPrepareKeyFactory } from '@ddd-kit/prepare-key';
import { redisUrl, uniqueName } from '../support/servers.js';

// One convention for both Redis classes of ddd-kit (and ioredis's own option): `keyPrefix`,
// used as given.

describe('RedisPrepareKeyFactory keyPrefix', () => {
  let redis: Redis;

  beforeAll(() => {
    redis = new Redis(redisUrl());
  });

  afterAll(async () => {
    await redis.quit();
  });

  it('is used as given: the record key is <keyPrefix>{<name>:<key>}', async () => {
    const keyPrefix = `${uniqueName('kp')}/`;
    await new RedisPrepareKeyFactory(redis, { keyPrefix }).create('user').prepare('alice', 1);
    expect((await redis.keys(`${keyPrefix}*`)).sort()).toEqual([`${keyPrefix}seal`, `${keyPrefix}{user:alice}`].sort());
  });

  it('defaults to ddd-kit:prepare:', async () => {
    const name = uniqueName('default');
    const key = new RedisPrepareKeyFactory(redis).create(name);
    await key.prepare('k', 1);
    expect(await redis.exists(`ddd-kit:prepare:{${encodeURIComponent(name)}:k}`)).toBe(1);
    await key.rollback('k');
  });

  it("refuses the removed option 'prefix' (naming keyPrefix), and braces (they would change the hash tag)", () => {
    expect(() => new RedisPrepareKeyFactory(redis, { prefix: 'a' } as never)).toThrow(PrepareKeyArgumentError);
    expect(() => new RedisPrepareKeyFactory(redis, { prefix: 'a' } as never)).toThrow(/use keyPrefix/);
    expect(() => new RedisPrepareKeyFactory(redis, { keyPrefix: 'a{b}:' })).toThrow(
      /keyPrefix must be a string without/,
    );
    expect(() => new RedisPrepareKeyFactory(redis, { keyPrefix: 42 as never })).toThrow(PrepareKeyArgumentError);
  });
});
