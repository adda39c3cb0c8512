import { afterAll, afterEach, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { Redis } from 'ioredis';
import {
  PrepareKeyArgumentError,
  PreparedValue,
  TTL_FOREVER,
  toTtlAt,
  RedisPrepareKeyFactory,
} from '@ddd-kit/prepare-key';
import { describePrepareKeyContract, PREPARE_KEY_FAULTS } from '@ddd-kit/prepare-key/testing';
import { redisFaultTarget } from '../support/fault-proxy/prepare-key-fault-targets.js';
import { startRedisServer } from '../support/server-provider.js';
import { redisUrl, uniqueName } from '../support/servers.js';
import { sleep } from '../support/wait.js';
import { primitivesOf } from '../../libs/prepare-key/src/prepare-key.primitives.js';
import {
  PREPARE,
  READ,
  REPREPARE,
  ROLLBACK,
} from '../../libs/prepare-key/src/backends/redis/redis-prepare-key.scripts.js';

describePrepareKeyContract(
  'Redis',
  async () => {
    const redis = new Redis(redisUrl());
    const prefix = uniqueName('pk_contract');
    const injector = await redisFaultTarget(redisUrl(), prefix);
    return {
      factory: new RedisPrepareKeyFactory(redis, { keyPrefix: `${prefix}:` }),
      faults: injector.faults,
      close: async () => {
        await injector.close();
        await redis.quit();
      },
    };
  },
  { faults: PREPARE_KEY_FAULTS, concurrentFaults: true },
);

describePrepareKeyContract('Redis with auto-pipelining and a client keyPrefix', () => {
  const redis = new Redis(redisUrl(), { enableAutoPipelining: true, keyPrefix: `${uniqueName('kp')}:` });
  return {
    factory: new RedisPrepareKeyFactory(redis, { keyPrefix: `${uniqueName('pk_contract')}:` }),
    close: async () => void (await redis.quit()),
  };
});

describe('RedisPrepareKeyFactory on one Redis', () => {
  let redis: Redis;

  beforeAll(() => {
    redis = new Redis(redisUrl());
  });

  afterAll(async () => {
    await redis.quit();
  });

  afterEach(() => {
    jest.restoreAllMocks();
  });

  /** Every record key under a prefix, read straight from Redis (the seal, `<prefix>seal`, left out). */
  async function keysUnder(prefix: string): Promise<string[]> {
    const keys: string[] = [];
    let cursor = '0';
    do {
      const [next, batch] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
      keys.push(...batch.filter((key) => key !== `${prefix}:seal`));
      cursor = next;
    } while (cursor !== '0');
    return keys.sort();
  }

  describe('record layout', () => {
    it('stores one string key `<prefix>:{<name>:<key>}` holding "<ttlAt>|<op>|<canonical JSON>"', async () => {
      const prefix = uniqueName('layout');
      const pk = new RedisPrepareKeyFactory(redis, { keyPrefix: `${prefix}:` }).create('username');
      const ttlAt = Date.now() + 60_000;
      await pk.prepare('alice', toTtlAt({ b: 2, a: 1 }, ttlAt));
      expect(await keysUnder(prefix)).toEqual([`${prefix}:{username:alice}`]);
      expect(await redis.get(`${prefix}:{username:alice}`)).toMatch(
        new RegExp(`^${ttlAt}\\|[A-Za-z0-9_-]+\\|\\{"a":1,"b":2\\}$`),
      );
    });

    it('leaves a tombstone "-|<op>|" on rollback that readers and listing ignore, and that Redis drops in two minutes', async () => {
      const prefix = uniqueName('layout');
      const pk = new RedisPrepareKeyFactory(redis, { keyPrefix: `${prefix}:` }).create('username');
      await pk.prepare('alice', 'v');
      expect(await pk.rollback('alice')).toBe(true);
      const key = `${prefix}:{username:alice}`;
      expect(await redis.get(key)).toMatch(/^-\|[A-Za-z0-9_-]+\|$/);
      expect(await redis.pttl(key)).toBeGreaterThan(110_000);
      expect(await pk.getValue('alice')).toBeUndefined();
      const listed: string[] = [];
      for await (const record of pk.records()) listed.push(record.key);
      expect(listed).toEqual([]);
      expect(await pk.rollback('alice')).toBe(false);
      expect(await pk.reprepare('alice', 'v')).toBe(false);
      expect(await pk.prepare('alice', 'w')).toBe(true);
    });

    it('percent-encodes names and keys, so separators, braces, % and unicode never collide', async () => {
      const prefix = uniqueName('layout');
      const factory = new RedisPrepareKeyFactory(redis, { keyPrefix: `${prefix}:` });
      await factory.create('a:b{c}').prepare('%.{}:é🔑', 1);
      expect(await keysUnder(prefix)).toEqual([`${prefix}:{a%3Ab%7Bc%7D:%25.%7B%7D%3A%C3%A9%F0%9F%94%91}`]);

      const pairs: Array<[string, string]> = [
        ['n', 'a:b'],
        ['n:a', 'b'],
        ['n%3Aa', 'b'],
        ['n', 'a%3Ab'],
        ['n{', '}x'],
        ['n', '{}x'],
        ['n*', 'x'],
      ];
      for (const [name, key] of pairs) expect(await factory.create(name).prepare(key, `${name}/${key}`)).toBe(true);
      for (const [name, key] of pairs) expect(await factory.create(name).get(key)).toBe(`${name}/${key}`);
      // The glob character in 'n*' matches nothing else when listing.
      const listed: string[] = [];
      for await (const record of factory.create('n*').records()) listed.push(record.key);
      expect(listed).toEqual(['x']);
    });

    it('lists only its own prefix, even when the prefix holds SCAN glob characters', async () => {
      const base = uniqueName('glob');
      const starred = new RedisPrepareKeyFactory(redis, { keyPrefix: `${base}*:` }).create('n');
      const other = new RedisPrepareKeyFactory(redis, { keyPrefix: `${base}x:` }).create('n');
      await starred.prepare('mine', 1);
      await other.prepare('theirs', 2);
      const listed: string[] = [];
      for await (const record of starred.records()) listed.push(record.key);
      expect(listed).toEqual(['mine']);
    });

    it("honours the client's own ioredis keyPrefix in every operation and in listing", async () => {
      const keyPrefix = `${uniqueName('client')}:`;
      const prefixed = new Redis(redisUrl(), { keyPrefix });
      try {
        const prefix = uniqueName('layout');
        const pk = new RedisPrepareKeyFactory(prefixed, { keyPrefix: `${prefix}:` }).create('n');
        await pk.prepare('k', 'v');
        expect(await redis.exists(`${keyPrefix}${prefix}:{n:k}`)).toBe(1);
        const listed: Array<[string, unknown]> = [];
        for await (const record of pk.records()) listed.push([record.key, record.value.value]);
        expect(listed).toEqual([['k', 'v']]);
        expect(await pk.rollback('k', 'v')).toBe(true);
        expect(await pk.getValue('k')).toBeUndefined();
        expect(await redis.get(`${keyPrefix}${prefix}:{n:k}`)).toMatch(/^-\|/); // the tombstone
      } finally {
        await prefixed.quit();
      }
    });
  });

  describe('getValues', () => {
    it('reads many keys with one script per thousand, in the order asked, each as getValue reads it', async () => {
      const pk = new RedisPrepareKeyFactory(redis, { keyPrefix: `${uniqueName('many')}:` }).create<number>('n');
      const held = Array.from({ length: 2_100 }, (_, i) => `k${i}`);
      await Promise.all(held.map((key, i) => pk.prepare(key, i)));
      await pk.prepare('expired', toTtlAt(-1, Date.now() - 1_000));
      await pk.prepare('rolled back', -2);
      await pk.rollback('rolled back');
      const keys = ['absent', ...held.reverse(), 'expired', 'rolled back', 'a:b{c}%'];
      const scripts = jest.spyOn(redis, 'evalsha');
      const found = await pk.getValues(keys);
      expect(scripts).toHaveBeenCalledTimes(3); // 2,104 keys
      scripts.mockRestore();
      expect([...found.keys()]).toEqual([...held, 'expired']);
      for (const key of keys) expect(found.get(key)).toEqual(await pk.getValue(key));
      expect(found.get('expired')?.isExpired()).toBe(true);
    });
  });

  describe('retention: expired records stay readable, then Redis drops them', () => {
    it('gives a TTL record an absolute expiry of ttlAt + retentionMs, and a forever record none', async () => {
      const prefix = uniqueName('retention');
      const pk = new RedisPrepareKeyFactory(redis, { keyPrefix: `${prefix}:`, retentionMs: 3_600_000 }).create('n');
      const ttlAt = Date.now() + 60_000;
      await pk.prepare('temp', toTtlAt('v', ttlAt));
      await pk.prepare('forever', 'v');
      expect(await redis.pexpiretime(`${prefix}:{n:temp}`)).toBe(ttlAt + 3_600_000);
      expect(await redis.pttl(`${prefix}:{n:forever}`)).toBe(-1);

      // A reprepare moves the expiry with the ttlAt, both ways.
      expect(await pk.reprepare('temp', 'v')).toBe(true);
      expect(await redis.pttl(`${prefix}:{n:temp}`)).toBe(-1);
      const later = Date.now() + 120_000;
      expect(await pk.reprepare('forever', 'v', toTtlAt('w', later))).toBe(true);
      expect(await redis.pexpiretime(`${prefix}:{n:forever}`)).toBe(later + 3_600_000);
    });

    it('defaults to 24 hours', async () => {
      const prefix = uniqueName('retention');
      const pk = new RedisPrepareKeyFactory(redis, { keyPrefix: `${prefix}:` }).create('n');
      const ttlAt = Date.now() + 1_000;
      await pk.prepare('k', toTtlAt('v', ttlAt));
      expect(await redis.pexpiretime(`${prefix}:{n:k}`)).toBe(ttlAt + 24 * 3_600_000);
    });

    it('keeps an expired record readable during retention, and it is gone afterwards', async () => {
      // Readable: expired a second ago, a minute of retention left, which no slow step can use up.
      const prefix = uniqueName('retention');
      const retained = new RedisPrepareKeyFactory(redis, { keyPrefix: `${prefix}:`, retentionMs: 60_000 }).create('n');
      const expiredAt = Date.now() - 1_000;
      expect(await retained.prepare('k', toTtlAt('v', expiredAt))).toBe(true);
      expect(await retained.get('k')).toBeUndefined();
      expect(await retained.getValue('k')).toEqual(new PreparedValue('v', expiredAt));

      // Gone: Redis drops the key at ttlAt + retentionMs by its own clock, which only real time moves.
      const short = uniqueName('retention');
      const pk = new RedisPrepareKeyFactory(redis, { keyPrefix: `${short}:`, retentionMs: 400 }).create('n');
      const ttlAt = Date.now() + 150;
      expect(await pk.prepare('k', toTtlAt('v', ttlAt))).toBe(true);
      await sleep(Math.max(0, ttlAt + 400 + 100 - Date.now())); // past ttlAt + retention, however long it runs
      expect(await pk.getValue('k')).toBeUndefined();
      expect(await keysUnder(short)).toEqual([]);
    });

    it('drops at once a record written already past its retention, as Redis would have', async () => {
      const prefix = uniqueName('retention');
      const pk = new RedisPrepareKeyFactory(redis, { keyPrefix: `${prefix}:`, retentionMs: 1_000 }).create('n');
      expect(await pk.prepare('k', toTtlAt('v', Date.now() - 5_000))).toBe(true);
      expect(await pk.getValue('k')).toBeUndefined();
      expect(await pk.prepare('k', toTtlAt('v', -TTL_FOREVER))).toBe(true);
      expect(await keysUnder(prefix)).toEqual([]);
    });

    it('with retentionMs Infinity, never gives a record an expiry', async () => {
      const prefix = uniqueName('retention');
      const pk = new RedisPrepareKeyFactory(redis, {
        keyPrefix: `${prefix}:`,
        retentionMs: Number.POSITIVE_INFINITY,
      }).create('n');
      await pk.prepare('k', toTtlAt('v', Date.now() - 5_000));
      expect(await redis.pttl(`${prefix}:{n:k}`)).toBe(-1);
      expect((await pk.getValue('k'))?.value).toBe('v');
    });
  });

  describe("one clock: the Redis server's", () => {
    it('decides expiry in prepare, reprepare and get with server time even when the local clock is an hour off', async () => {
      const pk = new RedisPrepareKeyFactory(redis, { keyPrefix: `${uniqueName('clock')}:` }).create('n');
      const realNow = Date.now();
      const ttlAt = realNow + 60_000; // a minute ahead of the server: unexpired
      const realDateNow = Date.now.bind(Date);
      jest.spyOn(Date, 'now').mockImplementation(() => realDateNow() + 3_600_000);

      expect(await pk.prepare('k', toTtlAt('v1', ttlAt))).toBe(true);
      expect(await pk.prepare('k', 'v2')).toBe(false); // a local clock would call it expired
      expect(await pk.get('k')).toBe('v1');
      expect(await pk.reprepare('k', toTtlAt('v1', ttlAt + 1))).toBe(true);

      jest.spyOn(Date, 'now').mockImplementation(() => realDateNow() - 3_600_000);
      expect(await pk.prepare('e', toTtlAt('v1', realNow - 1_000))).toBe(true); // already expired on the server
      expect(await pk.get('e')).toBeUndefined(); // a local clock an hour behind would still show it
      expect(await pk.reprepare('e', 'v2')).toBe(false);
      expect(await pk.prepare('e', 'v2')).toBe(true);
    });
  });

  // SCRIPT FLUSH empties a whole server's script cache: on a Redis of the test's own, so that no
  // other test file loads a script between the flush and the check that it is gone.
  describe('scripts', () => {
    let own: Awaited<ReturnType<typeof startRedisServer>>;
    let admin: Redis;
    beforeAll(async () => {
      own = await startRedisServer();
      admin = new Redis(own.url);
    });
    afterAll(async () => {
      await admin?.quit();
      await own?.stop();
    });

    it.each([false, true])(
      'runs by SHA and reloads a script Redis has forgotten (SCRIPT FLUSH; auto-pipelining: %s)',
      async (enableAutoPipelining) => {
        const client = new Redis(own.url, { enableAutoPipelining });
        try {
          const pk = new RedisPrepareKeyFactory(client, { keyPrefix: `${uniqueName('noscript')}:` }).create('n');
          await admin.script('FLUSH');
          expect(await admin.script('EXISTS', PREPARE.sha)).toEqual([0]);
          const keys = ['a', 'b', 'c'];
          const ttlAt = Date.now() + 60_000;
          expect(await Promise.all(keys.map((key) => pk.prepare(key, toTtlAt(key, ttlAt))))).toEqual([
            true,
            true,
            true,
          ]);
          // Held with a ttlAt: the SET … NX GET leaves these to the PREPARE script.
          expect(await Promise.all(keys.map((key) => pk.prepare(key, key)))).toEqual([false, false, false]);
          expect(await Promise.all(keys.map((key) => pk.get(key)))).toEqual(keys);
          expect(await pk.reprepare('a', 'a', 'w')).toBe(true);
          expect(await pk.rollback('a', 'w')).toBe(true);
          expect(await admin.script('EXISTS', PREPARE.sha, READ.sha, REPREPARE.sha, ROLLBACK.sha)).toEqual([
            1, 1, 1, 1,
          ]);
        } finally {
          await client.quit();
        }
      },
    );
  });

  describe('bad input writes nothing under the prefix and sends nothing', () => {
    it('refuses operator objects, oversize keys and unencodable values; the keys under the prefix stay as they were', async () => {
      const prefix = uniqueName('bad');
      const pk = new RedisPrepareKeyFactory(redis, { keyPrefix: `${prefix}:` }).create<unknown>('n');
      const sentinelTtl = Date.now() + 3_600_000;
      await pk.prepare('sentinel', toTtlAt({ owner: 'sentinel' }, sentinelTtl));
      const before = await keysUnder(prefix);
      const raw = await redis.get(`${prefix}:{n:sentinel}`);
      const sent = jest.spyOn(redis, 'sendCommand');

      const operator = { $ne: null } as unknown as string;
      const cyclic: Record<string, unknown> = {};
      cyclic.self = cyclic;
      const attempts: Array<() => Promise<unknown>> = [
        () => pk.prepare(operator, 'v'),
        () => pk.get(operator),
        () => pk.rollback(operator),
        () => pk.reprepare(operator, 'v'),
        () => pk.prepare('k'.repeat(1025), 'v'),
        () => pk.prepare('fresh', 10n),
        () => pk.prepare('fresh', cyclic),
        () => pk.reprepare('sentinel', () => 1),
        () => pk.rollback('sentinel', Symbol('s')),
      ];
      for (const attempt of attempts) await expect(attempt()).rejects.toBeInstanceOf(PrepareKeyArgumentError);
      // Below the validation too: a primitive never turns a non-string into a command.
      await expect(primitivesOf(pk).doPrepare(operator, '"v"', TTL_FOREVER, 'op')).rejects.toThrow(TypeError);
      await expect(primitivesOf(pk).doRollback(operator, 'op')).rejects.toThrow(TypeError);

      expect(sent).not.toHaveBeenCalled();
      expect(await keysUnder(prefix)).toEqual(before);
      expect(await redis.get(`${prefix}:{n:sentinel}`)).toBe(raw);
      expect(await pk.getValue('sentinel')).toEqual(new PreparedValue({ owner: 'sentinel' }, sentinelTtl));
    });

    it('refuses bad options with a named error that says what to do', () => {
      expect(() => new RedisPrepareKeyFactory(redis, { keyPrefix: 'a{b}:' })).toThrow(PrepareKeyArgumentError);
      expect(() => new RedisPrepareKeyFactory(redis, { keyPrefix: 'a{b}:' })).toThrow(/hash tag/);
      expect(() => new RedisPrepareKeyFactory(redis, { retentionMs: -1 })).toThrow(/retentionMs/);
      expect(() => new RedisPrepareKeyFactory(redis, { retentionMs: 1.5 })).toThrow(/retentionMs/);
      expect(() => new RedisPrepareKeyFactory({} as Redis)).toThrow(/ioredis client/);
      expect(() => new RedisPrepareKeyFactory(redis).create('')).toThrow(PrepareKeyArgumentError);
    });
  });
});
