import { afterAll, afterEach, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { Redis, ReplyError } from 'ioredis';
import { toTtlAt, RedisPrepareKeyFactory, type PrepareKey, type PrepareKeyFactory } from '@ddd-kit/prepare-key';
import { PREPARE_KEY_FAULTS, type PrepareKeyFault, type PrepareKeyFaultTarget } from '@ddd-kit/prepare-key/testing';
import { redisFaultTarget } from '../support/fault-proxy/prepare-key-fault-targets.js';
import { redisUrl, uniqueName } from '../support/servers.js';
import { waitFor } from '../support/wait.js';

// prepare's native path: `SET <key> <record> NX GET [PXAT …]`, and the PREPARE script after it
// only for a record the reply cannot settle (one with a ttlAt, or a tombstone). Beside the
// contract's fault matrix (which faults the SET of a free key and of a key held forever), these
// fault each of the two commands of the cases that need both, and pin what the reply settles.

type Owner = { owner: string };
const own = (owner: string): Owner => ({ owner });
const HOUR_MS = 3_600_000;

// The native SET cannot check the seal (redis-prepare-key.data-loss.spec.ts): a factory sends it
// only with `seal: false`, for a Redis whose persistence is trusted.
describe('RedisPrepareKey.prepare: the native SET … NX GET (seal: false)', () => {
  let redis: Redis;
  let prefix: string;
  let clean: PrepareKeyFactory;
  let injector: { faults: PrepareKeyFaultTarget; close: () => Promise<void> };

  beforeAll(async () => {
    redis = new Redis(redisUrl());
    prefix = uniqueName('pk_native');
    clean = new RedisPrepareKeyFactory(redis, { keyPrefix: `${prefix}:`, seal: false });
    injector = await redisFaultTarget(redisUrl(), prefix, { seal: false });
  });

  afterAll(async () => {
    await injector.close();
    await redis.quit();
  });

  afterEach(() => {
    jest.restoreAllMocks();
  });

  /** Runs `prepare` through a client that meets `fault` on the nth command about `name`. */
  async function underFault(
    fault: PrepareKeyFault,
    name: string,
    nth: number,
    run: (pk: PrepareKey<Owner>) => Promise<boolean>,
  ): Promise<{ outcome: { answer: boolean } | { error: unknown }; faulted: string }> {
    const opened = await injector.faults.open(fault);
    try {
      const armed = injector.faults.arm(fault, name, nth);
      let outcome: { answer: boolean } | { error: unknown };
      try {
        outcome = { answer: await run(opened.factory.create<Owner>(name)) };
      } catch (error) {
        outcome = { error };
      }
      armed.cancel();
      // The fault met its command before the operation could answer: the ceiling only catches one never applied.
      const fired = (await waitFor(`the ${fault} fault to be applied`, armed.fired)) as { command: string };
      return { outcome, faulted: fired.command };
    } finally {
      await opened.close();
    }
  }

  describe('what the reply settles', () => {
    it('a lost reply of the SET, then its resend: true for this very call, which holds the key', async () => {
      const name = uniqueName('n');
      const { outcome, faulted } = await underFault('lost-reply-resent', name, 1, (pk) => pk.prepare('k', own('A')));
      expect(faulted).toBe('SET');
      expect(outcome).toEqual({ answer: true });
      expect(await clean.create<Owner>(name).get('k')).toEqual(own('A'));
    });

    it("another operation's record, even of the same value: false, and that record stays", async () => {
      const name = uniqueName('n');
      const reference = clean.create<Owner>(name);
      expect(await reference.prepare('k', own('A'))).toBe(true);
      const raw = await redis.get(`${prefix}:{${name}:k}`);
      // Resent or not, the SET finds a record that this call did not write.
      const { outcome, faulted } = await underFault('lost-reply-resent', name, 1, (pk) => pk.prepare('k', own('A')));
      expect(faulted).toBe('SET');
      expect(outcome).toEqual({ answer: false });
      expect(await reference.prepare('k', own('A'))).toBe(false);
      expect(await redis.get(`${prefix}:{${name}:k}`)).toBe(raw);
    });

    it('sends one command for a free key and for a key held forever; the script only for a record with a ttlAt or a tombstone', async () => {
      const pk = clean.create<Owner>(uniqueName('n'));
      const evalsha = jest.spyOn(redis, 'evalsha');
      const set = jest.spyOn(redis, 'set');
      expect(await pk.prepare('free', own('A'))).toBe(true);
      expect(await pk.prepare('free', own('B'))).toBe(false);
      expect(await pk.prepare('ttl', toTtlAt(own('A'), Date.now() + HOUR_MS))).toBe(true);
      expect(set).toHaveBeenCalledTimes(3);
      expect(evalsha).not.toHaveBeenCalled();

      expect(await pk.prepare('ttl', own('B'))).toBe(false); // held until its ttlAt: the server's clock decides
      expect(await pk.rollback('free')).toBe(true);
      const scriptsBefore = evalsha.mock.calls.length;
      expect(await pk.prepare('free', own('C'))).toBe(true); // a tombstone: free again, the script writes
      expect(evalsha.mock.calls.length - scriptsBefore).toBe(1);
      expect(await pk.get('free')).toEqual(own('C'));
      expect(await pk.get('ttl')).toEqual(own('A'));
    });
  });

  describe('the cases that need both commands, under a fault on each', () => {
    interface Case {
      title: string;
      /** Leaves key 'k' of PrepareKey `name` as the case needs it. */
      setup: (reference: PrepareKey<Owner>) => Promise<void>;
      answer: boolean;
      /** What `get` shows before and after the operation. */
      before: Owner | undefined;
      after: Owner | undefined;
    }
    const cases: Case[] = [
      {
        title: 'a key held by another value until its ttlAt',
        setup: async (reference) => {
          expect(await reference.prepare('k', toTtlAt(own('B'), Date.now() + HOUR_MS))).toBe(true);
        },
        answer: false,
        before: own('B'),
        after: own('B'),
      },
      {
        title: 'a key whose record expired (still retained)',
        setup: async (reference) => {
          // Written already expired (a second ago, by the server's clock on this machine): the same
          // record as one that lapsed, kept for the retention period.
          expect(await reference.prepare('k', toTtlAt(own('B'), Date.now() - 1_000))).toBe(true);
          expect(await reference.get('k')).toBeUndefined();
          expect((await reference.getValue('k'))?.value).toEqual(own('B'));
        },
        answer: true,
        before: undefined,
        after: own('A'),
      },
      {
        title: 'a key rolled back (its tombstone)',
        setup: async (reference) => {
          expect(await reference.prepare('k', own('B'))).toBe(true);
          expect(await reference.rollback('k')).toBe(true);
        },
        answer: true,
        before: undefined,
        after: own('A'),
      },
    ];

    for (const fault of PREPARE_KEY_FAULTS) {
      for (const c of cases) {
        for (const [nth, command] of [
          [1, 'SET'],
          [2, 'EVALSHA'],
        ] as const) {
          // Each case waits out a client timeout or two; the cases (each on a name of its own,
          // through a client of its own) overlap them.
          it.concurrent(
            `${fault}, on the ${command}: ${c.title}: the right answer or an error, and the state it says`,
            async () => {
              const name = uniqueName('n');
              const reference = clean.create<Owner>(name);
              await c.setup(reference);
              const { outcome, faulted } = await underFault(fault, name, nth, (pk) => pk.prepare('k', own('A')));
              expect(faulted).toBe(command);
              const state = await reference.get('k');
              if ('answer' in outcome) {
                expect(outcome.answer).toBe(c.answer);
                expect(state).toEqual(c.after);
              } else {
                // A resent command always gets a reply: an error there is a wrong answer.
                if (fault === 'lost-reply-resent') throw outcome.error;
                expect([c.before, c.after]).toContainEqual(state);
              }
            },
          );
        }
      }
    }
  });

  it('on a server that refuses NX with GET (Redis 6.2: ERR syntax error), runs the PREPARE script from then on', async () => {
    const client = new Redis(redisUrl());
    try {
      const pk = new RedisPrepareKeyFactory(client, { keyPrefix: `${prefix}:`, seal: false }).create<Owner>(
        uniqueName('n'),
      );
      const set = jest
        .spyOn(client, 'set')
        .mockImplementation(() => Promise.reject(new ReplyError('ERR syntax error')));
      const evalsha = jest.spyOn(client, 'evalsha');
      expect(await pk.prepare('a', own('A'))).toBe(true);
      expect(await pk.prepare('a', own('B'))).toBe(false);
      expect(await pk.prepare('b', own('B'))).toBe(true);
      expect(set).toHaveBeenCalledTimes(1);
      expect(evalsha).toHaveBeenCalledTimes(3);
      expect(await pk.get('a')).toEqual(own('A'));
      expect(await pk.get('b')).toEqual(own('B'));
    } finally {
      await client.quit();
    }
  });

  describe('a command that wrote, then failed before its reply arrived', () => {
    // What a timeout after the server acted looks like to the caller. prepare rejects, and what
    // it wrote is released first (the undo goes from the same step that reads the reply).
    const lostAfterWriting = <A extends unknown[]>(send: (...args: A) => Promise<unknown>) =>
      (async (...args: A) => {
        await send(...args);
        throw new Error('Connection is closed.');
      }) as never;

    /** `run` on a PrepareKey of a client of its own (whose methods the test may replace). */
    async function onOwnClient(run: (client: Redis, pk: PrepareKey<Owner>) => Promise<void>): Promise<void> {
      const client = new Redis(redisUrl());
      try {
        await run(
          client,
          new RedisPrepareKeyFactory(client, { keyPrefix: `${prefix}:`, seal: false }).create<Owner>(uniqueName('n')),
        );
      } finally {
        await client.quit();
      }
    }

    it('the SET of a free key: rejects, and the key is free again', () =>
      onOwnClient(async (client, pk) => {
        const send = client.set.bind(client) as (...args: unknown[]) => Promise<unknown>;
        jest.spyOn(client, 'set').mockImplementationOnce(lostAfterWriting(send));
        await expect(pk.prepare('k', own('A'))).rejects.toThrow(/Connection is closed/);
        expect(await pk.getValue('k')).toBeUndefined();
        expect(await pk.prepare('k', own('B'))).toBe(true);
      }));

    it('the script after the SET (a record past its ttlAt): rejects, and the key is free again', () =>
      onOwnClient(async (client, pk) => {
        expect(await pk.prepare('k', toTtlAt(own('B'), Date.now() - 1))).toBe(true);
        const send = client.evalsha.bind(client) as (...args: unknown[]) => Promise<unknown>;
        const evalsha = jest.spyOn(client, 'evalsha').mockImplementationOnce(lostAfterWriting(send));
        await expect(pk.prepare('k', own('A'))).rejects.toThrow(/Connection is closed/);
        expect(evalsha).toHaveBeenCalled();
        expect(await pk.get('k')).toBeUndefined();
        expect(await pk.prepare('k', own('C'))).toBe(true);
      }));
  });

  it('passes any other error of the SET on, and keeps using the SET', async () => {
    const client = new Redis(redisUrl());
    try {
      const pk = new RedisPrepareKeyFactory(client, { keyPrefix: `${prefix}:`, seal: false }).create<Owner>(
        uniqueName('n'),
      );
      const set = jest
        .spyOn(client, 'set')
        .mockImplementationOnce(() => Promise.reject(new ReplyError('OOM command not allowed')));
      await expect(pk.prepare('a', own('A'))).rejects.toThrow(/OOM/);
      expect(await pk.prepare('a', own('A'))).toBe(true);
      expect(set).toHaveBeenCalledTimes(2);
    } finally {
      await client.quit();
    }
  });
});
