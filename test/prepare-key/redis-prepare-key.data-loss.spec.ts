import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Redis } from 'ioredis';
import { PrepareKeyDataLostError, RedisPrepareKeyFactory, type PrepareKey } from '@ddd-kit/prepare-key';
import { startRedisServer } from '../support/server-provider.js';
import { uniqueName } from '../support/servers.js';
import { waitFor } from '../support/wait.js';

// A Redis of the test's own, without persistence: wiped by FLUSHALL, and killed and started
// again empty. The owners of the reservations live in a Map (the write model of this test).

type Owner = { user: string };

describe('RedisPrepareKeyFactory on a store that lost its data', () => {
  let server: Awaited<ReturnType<typeof startRedisServer>>;
  let redis: Redis;

  beforeAll(async () => {
    server = await startRedisServer();
    redis = new Redis(server.url, { maxRetriesPerRequest: 1 });
  });

  afterAll(async () => {
    redis.disconnect();
    await server.stop();
  });

  /**
   * A factory whose 'username' reservations are restored from `owners` (name → owner); `after`
   * runs at the end of each restore.
   */
  function setup(
    owners: Map<string, Owner>,
    after: () => Promise<void> = async () => {},
  ): { factory: RedisPrepareKeyFactory; usernames: PrepareKey<Owner> } {
    const factory = new RedisPrepareKeyFactory(redis, { keyPrefix: `${uniqueName('data_loss')}:` });
    factory.restoreWith('username', async (target) => {
      for (const [name, owner] of owners) await target.prepare(name, owner);
      await after();
    });
    return { factory, usernames: factory.create<Owner>('username') };
  }

  /** Waits until the store answers again (the restore finished), then gives that answer. */
  function answered<T>(what: string, operation: () => Promise<T>): Promise<{ value: T }> {
    return waitFor(what, async () => {
      try {
        return { value: await operation() };
      } catch (error) {
        if (error instanceof PrepareKeyDataLostError) return undefined;
        throw error;
      }
    });
  }

  it('after FLUSHALL rejects every operation with PrepareKeyDataLostError until restored, then refuses a name taken before', async () => {
    const owners = new Map<string, Owner>();
    const { usernames } = setup(owners);
    // A new store is sealed at its first use: a new deployment reserves at once.
    expect(await usernames.prepare('bob', { user: 'u1' })).toBe(true);
    owners.set('bob', { user: 'u1' });

    await redis.flushall();
    const lost = usernames.prepare('bob', { user: 'u2' });
    await expect(lost).rejects.toBeInstanceOf(PrepareKeyDataLostError);
    await expect(lost).rejects.toMatchObject({ code: 'PREPARE_KEY_DATA_LOST', prepareKeyName: 'username' });

    const { value } = await answered('the reservations to be restored after FLUSHALL', () =>
      usernames.prepare('bob', { user: 'u2' }),
    );
    expect(value).toBe(false);
    expect(await usernames.get('bob')).toEqual({ user: 'u1' });
    expect(await usernames.prepare('carl', { user: 'u2' })).toBe(true);
  });

  it('reads, releases and replaces nothing on a wiped store: each rejects instead of answering from it', async () => {
    const owners = new Map<string, Owner>();
    const { usernames } = setup(owners);
    expect(await usernames.prepare('dora', { user: 'u1' })).toBe(true);
    owners.set('dora', { user: 'u1' });

    await redis.flushall();
    await expect(usernames.get('dora')).rejects.toBeInstanceOf(PrepareKeyDataLostError);
    await answered('the reservations to be restored after FLUSHALL', () => usernames.get('dora'));
    await redis.flushall();
    await expect(usernames.getValues(['dora', 'eve'])).rejects.toBeInstanceOf(PrepareKeyDataLostError);
    await answered('the reservations to be restored after FLUSHALL', () => usernames.getValues(['dora']));

    await redis.flushall();
    await expect(usernames.rollback('dora', { user: 'u1' })).rejects.toBeInstanceOf(PrepareKeyDataLostError);
    await answered('the reservations to be restored after FLUSHALL', () => usernames.getValue('dora'));
    await redis.flushall();
    await expect(usernames.reprepare('dora', { user: 'u1' }, { user: 'u3' })).rejects.toBeInstanceOf(
      PrepareKeyDataLostError,
    );
    const { value } = await answered('the reservations to be restored after FLUSHALL', () => usernames.get('dora'));
    expect(value).toEqual({ user: 'u1' });
  });

  it('after a restart without persistence, refuses a name taken before once restored', async () => {
    const owners = new Map<string, Owner>();
    const { usernames } = setup(owners);
    expect(await usernames.prepare('eve', { user: 'u1' })).toBe(true);
    owners.set('eve', { user: 'u1' });

    await server.restart();
    await waitFor('the client to reconnect to the restarted server', async () => (await redis.ping()) === 'PONG');
    await expect(usernames.prepare('eve', { user: 'u2' })).rejects.toBeInstanceOf(PrepareKeyDataLostError);
    const { value } = await answered('the reservations to be restored after the restart', () =>
      usernames.prepare('eve', { user: 'u2' }),
    );
    expect(value).toBe(false);
  });

  it('a store wiped again during its restore is not sealed by that restore', async () => {
    const owners = new Map<string, Owner>();
    let wipesDuringRestore = 0;
    const { usernames } = setup(owners, async () => {
      if (wipesDuringRestore === 0) return;
      wipesDuringRestore--;
      await redis.flushall(); // after the restore wrote its records, before it seals
    });
    expect(await usernames.prepare('gus', { user: 'u1' })).toBe(true);
    owners.set('gus', { user: 'u1' });

    wipesDuringRestore = 1;
    await redis.flushall();
    await expect(usernames.prepare('gus', { user: 'u2' })).rejects.toBeInstanceOf(PrepareKeyDataLostError);
    // The first restore lost its records and does not seal; the next operation restores again.
    const { value } = await answered('the reservations to be restored a second time', () =>
      usernames.prepare('gus', { user: 'u2' }),
    );
    expect(value).toBe(false);
    expect(wipesDuringRestore).toBe(0);
  });

  it('a process that starts on a wiped store restores before its first answer', async () => {
    const owners = new Map<string, Owner>([['fay', { user: 'u1' }]]);
    const { usernames } = setup(owners); // a fresh prefix: nothing sealed, as after a wipe while no process ran
    await expect(usernames.prepare('fay', { user: 'u2' })).resolves.toBe(false);
  });
});
