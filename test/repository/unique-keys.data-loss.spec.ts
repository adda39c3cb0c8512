import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Module } from '@nestjs/common';
import { Test, type TestingModule } from '@nestjs/testing';
import { Cluster, Redis } from 'ioredis';
import { Aggregate } from '@ddd-kit/id-generator';
import {
  PreparableKey,
  PrepareKey,
  PrepareKeyDataLostError,
  PrepareKeyModule,
  RedisPrepareKeyFactory,
  type PreparedValue,
} from '@ddd-kit/prepare-key';
import {
  AggregateRoot,
  getRepositoryToken,
  reconcileUniqueKeys,
  RepositoryModule,
  UniqueKey,
  UniqueKeyViolationError,
  type InMemoryRepository,
  type UniqueKeyOwner,
} from '@ddd-kit/repository';
import { startRedisCluster, startRedisServer } from '../support/server-provider.js';
import { uniqueName } from '../support/servers.js';
import { waitFor } from '../support/wait.js';

// A reservation store that lost its data is recognised and filled again from the aggregates by
// the library itself (the restorers RepositoryModule registers): on a Redis of the test's own,
// wiped by FLUSHALL, and on a Cluster of its own with one shard wiped.

@Aggregate({ name: 'member' })
@UniqueKey('handle', (member: Member) => member.handle)
class Member extends AggregateRoot<string> {
  constructor(
    id: string,
    public handle: string,
  ) {
    super(id);
  }
}

/** Handles are case-folded by the declared class: a restore must store them as requests do. */
@PreparableKey('handle')
abstract class HandlePrepareKey extends PrepareKey<UniqueKeyOwner> {
  override prepare(key: string, value: UniqueKeyOwner | PreparedValue<UniqueKeyOwner>): Promise<boolean> {
    return super.prepare(key.toLowerCase(), value);
  }
  override getValue(key: string): Promise<PreparedValue<UniqueKeyOwner> | undefined> {
    return super.getValue(key.toLowerCase());
  }
  override rollback(key: string, value?: UniqueKeyOwner): Promise<boolean> {
    return value === undefined ? super.rollback(key.toLowerCase()) : super.rollback(key.toLowerCase(), value);
  }
  override reprepare(...args: [string, ...unknown[]]): Promise<boolean> {
    const [key, ...rest] = args;
    return (super.reprepare as (...a: unknown[]) => Promise<boolean>)(key.toLowerCase(), ...rest);
  }
}

async function startApp(
  client: Redis | Cluster,
): Promise<{ app: TestingModule; members: InMemoryRepository<string, Member>; factory: RedisPrepareKeyFactory }> {
  void HandlePrepareKey;
  const factory = new RedisPrepareKeyFactory(client, { keyPrefix: `${uniqueName('wiped')}:` });
  @Module({
    imports: [
      PrepareKeyModule.forRoot({ factory }),
      RepositoryModule.forRoot({}),
      RepositoryModule.forFeature([Member]),
    ],
  })
  class AppModule {}
  const app = await Test.createTestingModule({ imports: [AppModule] }).compile();
  await app.init();
  // The bootstrap's restore may fail on a busy machine (a Cluster's slots not read in time); the
  // store then refuses writes until a restore succeeds, which the cases must not take for the loss.
  await waitFor('the store to be restored and sealed', async () => {
    await factory.restoreIfLost();
    return true;
  });
  return { app, members: app.get(getRepositoryToken(Member)), factory };
}

/** The error an insert ends with (undefined: it succeeded). */
async function insertError(members: InMemoryRepository<string, Member>, member: Member): Promise<unknown> {
  try {
    await members.insert(member);
    return undefined;
  } catch (error) {
    return error;
  }
}

describe('@UniqueKey reservations on a Redis that lost its data', () => {
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

  it('rejects with PrepareKeyDataLostError after FLUSHALL, restores from the aggregates, then refuses a handle taken before', async () => {
    const { app, members, factory } = await startApp(redis);
    try {
      await members.insert(new Member('m1', 'Ann'));
      await members.insert(new Member('m2', 'bob'));
      await redis.flushall();

      // Never true on a wiped store: the insert is refused and writes nothing.
      expect(await insertError(members, new Member('m3', 'ann'))).toBeInstanceOf(PrepareKeyDataLostError);
      expect(await members.findById('m3')).toBeNull();

      // Restored by the library (the repository's restorer), with nothing run by hand.
      const refused = await waitFor('the handles to be restored from the members', async () => {
        const error = await insertError(members, new Member('m4', 'ANN'));
        return error instanceof PrepareKeyDataLostError ? undefined : { error };
      });
      expect(refused.error).toBeInstanceOf(UniqueKeyViolationError);
      // Stored as requests store it: the declared class's case-folding applied.
      expect(await factory.create<UniqueKeyOwner>('handle').get('ann')).toMatchObject({
        aggregate: 'member',
        id: 'm1',
      });
      expect(await factory.create<UniqueKeyOwner>('handle').get('bob')).toMatchObject({ id: 'm2' });
      await members.insert(new Member('m5', 'carl'));
    } finally {
      await app.close();
    }
  });

  it('keeps reporting both owners of a duplicate that exists before the loss', async () => {
    const { app, members, factory } = await startApp(redis);
    try {
      await members.insert(new Member('d1', 'dora'));
      // A duplicate made before this library recognised losses: the reservation vanished, another took the name.
      await factory.create('handle').rollback('dora');
      await members.insert(new Member('d2', 'dora'));
      await redis.flushall();

      expect(await insertError(members, new Member('d3', 'dora'))).toBeInstanceOf(PrepareKeyDataLostError);
      await waitFor(
        'the handles to be restored from the members',
        async () => (await insertError(members, new Member('d4', 'dora'))) instanceof UniqueKeyViolationError,
      );
      const report = await reconcileUniqueKeys(members, { graceMs: 0 });
      expect(report.shared).toEqual([{ name: 'handle', key: 'dora', ids: expect.arrayContaining(['d1', 'd2']) }]);
      expect(report.heldByOther).toHaveLength(1);
    } finally {
      await app.close();
    }
  });
});

describe('@UniqueKey reservations on a Redis Cluster with one shard wiped', () => {
  let cluster: Awaited<ReturnType<typeof startRedisCluster>>;
  let client: Cluster;

  beforeAll(async () => {
    cluster = await startRedisCluster();
    client = new Cluster(cluster.nodes, { redisOptions: { maxRetriesPerRequest: 1 } });
  });

  afterAll(async () => {
    await client.quit();
    await cluster.stop();
  });

  it('refuses on the wiped shard only, restores it, then refuses every handle taken before', async () => {
    const { app, members } = await startApp(client);
    try {
      const handles = Array.from({ length: 24 }, (_, i) => `h${i}`);
      for (const [i, handle] of handles.entries()) await members.insert(new Member(`c${i}`, handle));
      await cluster.flush(0);

      const errors = await Promise.all(handles.map((handle, i) => insertError(members, new Member(`x${i}`, handle))));
      // The wiped shard's handles are refused as lost, the others as taken: none is taken twice.
      expect(errors.filter((error) => error === undefined)).toEqual([]);
      expect(errors.some((error) => error instanceof PrepareKeyDataLostError)).toBe(true);
      expect(errors.some((error) => error instanceof UniqueKeyViolationError)).toBe(true);

      await waitFor('the wiped shard to be restored from the members', async () => {
        const again = await Promise.all(handles.map((handle, i) => insertError(members, new Member(`y${i}`, handle))));
        expect(again.filter((error) => error === undefined)).toEqual([]);
        return again.every((error) => error instanceof UniqueKeyViolationError);
      });
    } finally {
      await app.close();
    }
  });
});
