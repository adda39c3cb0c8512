import {
  MemoryPrepareKeyFactory,
  MongoPrepareKeyFactory,
  PostgresPrepareKeyFactory,
  RedisPrepareKeyFactory,
  type PrepareKeyFactory,
} from '@ddd-kit/prepare-key';
import type { ArmedFault, PrepareKeyFault, PrepareKeyFaultTarget } from '@ddd-kit/prepare-key/testing';
import type { UniqueKeyOwner } from '@ddd-kit/repository';
import { Cluster, Redis } from 'ioredis';
import mongoose, { type Connection } from 'mongoose';
import pg from 'pg';
import {
  mongoFaultTarget,
  postgresFaultTarget,
  redisClusterFaultTarget,
  redisFaultTarget,
} from '../../support/fault-proxy/prepare-key-fault-targets.js';
import { mongoUri, postgresSchema, redisClusterNodes, redisUrl, uniqueName } from '../../support/servers.js';
import { MemberInMemoryRepository, MemberMongooseRepository, MemberPostgresRepository } from './member.aggregate.js';
import {
  describeUniqueKeyContract,
  type MemberRepositoryClass,
  type Reservations,
  type UniqueKeyHarness,
} from './unique-key-contract.js';

/** A fault case's own key space: reached directly and through a fault proxy of its own. */
interface FaultyKeySpace {
  clean: PrepareKeyFactory;
  faulty: PrepareKeyFactory;
  arm(fault: PrepareKeyFault, name: string, nth: number): ArmedFault;
  close(): Promise<void>;
}

/** A PrepareKey backend: a factory per fresh key space, and how to reach a fresh one through faults. */
interface KeyBackend {
  label: string;
  /** Whether its store is reached over a network, through which faults are injected. */
  faults: boolean;
  open(): Promise<{
    factory(): PrepareKeyFactory;
    /**
     * A fresh key space and a proxy for every fault case, so that the cases run at once: each
     * waits out a client timeout per command, and one after another they took minutes a file.
     */
    faulty?: (fault: PrepareKeyFault) => Promise<FaultyKeySpace>;
    close(): Promise<void>;
  }>;
}

/** The factory of `target`, opened for `fault`, beside `clean` on the same key space. */
async function faultyKeySpace(
  fault: PrepareKeyFault,
  target: { faults: PrepareKeyFaultTarget; close: () => Promise<void> },
  clean: PrepareKeyFactory,
): Promise<FaultyKeySpace> {
  const opened = await target.faults.open(fault);
  return {
    clean,
    faulty: opened.factory,
    arm: (f, name, nth) => target.faults.arm(f, name, nth),
    close: async () => {
      await opened.close();
      await target.close();
    },
  };
}

/** A repository backend: the class and options for a fresh store. */
interface StoreBackend {
  label: string;
  open(): Promise<{ Repository: MemberRepositoryClass; options(): Record<string, unknown>; close(): Promise<void> }>;
}

export type KeyBackendName = 'memory' | 'redis' | 'redis-cluster' | 'mongo' | 'postgres';

const keyBackends: Record<KeyBackendName, KeyBackend> = {
  memory: {
    label: 'memory reservations',
    faults: false,
    open: async () => ({ factory: () => new MemoryPrepareKeyFactory(), close: async () => {} }),
  },
  redis: {
    label: 'Redis reservations',
    faults: true,
    open: async () => {
      const redis = new Redis(redisUrl());
      return {
        factory: () => new RedisPrepareKeyFactory(redis, { keyPrefix: `${uniqueName('uk')}:` }),
        faulty: async (fault) => {
          const prefix = uniqueName('uk');
          const clean = new RedisPrepareKeyFactory(redis, { keyPrefix: `${prefix}:` });
          return faultyKeySpace(fault, await redisFaultTarget(redisUrl(), prefix), clean);
        },
        close: async () => redis.disconnect(),
      };
    },
  },
  // The seal on a Cluster (a key in each of its 16,384 slots) would cost every fixture's fresh
  // factory seconds: tested in unique-keys.data-loss.spec.ts instead.
  'redis-cluster': {
    label: 'Redis Cluster reservations',
    faults: true,
    open: async () => {
      const cluster = new Cluster(redisClusterNodes());
      return {
        factory: () => new RedisPrepareKeyFactory(cluster, { keyPrefix: `${uniqueName('uk')}:`, seal: false }),
        faulty: async (fault) => {
          const prefix = uniqueName('uk');
          const clean = new RedisPrepareKeyFactory(cluster, { keyPrefix: `${prefix}:`, seal: false });
          return faultyKeySpace(
            fault,
            await redisClusterFaultTarget(redisClusterNodes(), prefix, { seal: false }),
            clean,
          );
        },
        close: async () => cluster.disconnect(),
      };
    },
  },
  mongo: {
    label: 'MongoDB-wire (jongodb) reservations',
    faults: true,
    open: async () => {
      const dbName = uniqueName('uk');
      const connection = await mongoose.createConnection(mongoUri(), { dbName }).asPromise();
      let n = 0;
      return {
        factory: () => new MongoPrepareKeyFactory(connection, { collectionPrefix: `k${++n}_` }),
        faulty: async (fault) => {
          const own = uniqueName('uk');
          const clean = new MongoPrepareKeyFactory(connection.useDb(own, { useCache: false }));
          return faultyKeySpace(fault, await mongoFaultTarget(mongoUri(), own), clean);
        },
        close: () => connection.close(),
      };
    },
  },
  postgres: {
    label: 'PostgreSQL reservations',
    faults: true,
    open: async () => {
      const schema = await postgresSchema('uk');
      const pool = new pg.Pool({ connectionString: schema.url });
      let n = 0;
      return {
        factory: () => new PostgresPrepareKeyFactory(pool, { table: `keys_${++n}`, sweepIntervalMs: 0 }),
        faulty: async (fault) => {
          const table = `faulty_keys_${++n}`;
          const clean = new PostgresPrepareKeyFactory(pool, { table, sweepIntervalMs: 0 });
          return faultyKeySpace(fault, await postgresFaultTarget(schema.url, table), clean);
        },
        close: async () => {
          await pool.end();
          await schema.drop();
        },
      };
    },
  },
};

/** Where the PostgreSQL repositories keep their tables: one schema for the file. */
let membersSchema: Promise<Awaited<ReturnType<typeof postgresSchema>>> | undefined;

const storeBackends: StoreBackend[] = [
  {
    label: 'InMemoryRepository',
    open: async () => ({
      Repository: MemberInMemoryRepository as unknown as MemberRepositoryClass,
      options: () => ({}),
      close: async () => {},
    }),
  },
  {
    label: 'MongooseRepository (MongoDB-wire emulator)',
    open: async () => {
      const connection: Connection = await mongoose
        .createConnection(mongoUri(), { dbName: uniqueName('uk_members') })
        .asPromise();
      let n = 0;
      return {
        Repository: MemberMongooseRepository as unknown as MemberRepositoryClass,
        options: () => ({ connection, collection: `members_${++n}` }),
        close: () => connection.close(),
      };
    },
  },
  {
    label: 'PostgresRepository',
    open: async () => {
      membersSchema ??= postgresSchema('uk_members');
      const schema = await membersSchema;
      const pool = new pg.Pool({ connectionString: schema.url });
      let n = 0;
      return {
        Repository: MemberPostgresRepository as unknown as MemberRepositoryClass,
        options: () => ({ pool, table: `members_${process.hrtime.bigint().toString(36)}_${++n}` }),
        close: () => pool.end(),
      };
    },
  },
];

function reservationsOf(factory: PrepareKeyFactory): Reservations {
  return { handle: factory.create<UniqueKeyOwner>('handle'), email: factory.create<UniqueKeyOwner>('email') };
}

/**
 * The unique-key contract on one PrepareKey backend × every repository backend: one spec file a
 * PrepareKey backend, so that the runner spreads them over its workers.
 */
export function describeUniqueKeysOn(name: KeyBackendName): void {
  const keys = keyBackends[name];
  for (const store of storeBackends) {
    describeUniqueKeyContract(
      `${keys.label} × ${store.label}`,
      async (): Promise<UniqueKeyHarness> => {
        const [k, s] = [await keys.open(), await store.open()];
        const faulty = k.faulty;
        return {
          Repository: s.Repository,
          options: s.options,
          reservations: () => reservationsOf(k.factory()),
          faults:
            faulty === undefined
              ? undefined
              : async (fault: PrepareKeyFault) => {
                  const space = await faulty(fault);
                  return {
                    clean: reservationsOf(space.clean),
                    faulty: reservationsOf(space.faulty),
                    arm: (nth: number) => space.arm(fault, 'handle', nth),
                    close: space.close,
                  };
                },
          close: async () => {
            await s.close();
            await k.close();
          },
        };
      },
      { faults: keys.faults },
    );
  }
}
