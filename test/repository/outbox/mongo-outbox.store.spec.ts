// MongoOutboxStore: the outbox kept inside each aggregate's document by MongooseRepository
// with `outbox: true`, on the MongoDB-wire server of the run (the jongodb emulator unless
// MONGODB_URI names a MongoDB).
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import mongoose, { type Connection } from 'mongoose';
import { MongoOutboxStore } from '@ddd-kit/repository';
import { mongoLabel, mongoUri, uniqueName } from '../../support/servers.js';
import { Counter, CounterMongooseRepository } from '../support/counter.aggregate.js';
import { outboxStoreContract } from '../support/outbox-store-contract.js';
import { describeRepositoryContract, type CounterRepository, type CounterRepositoryClass } from '../support/repository-contract.js';

let connection: Connection;
let collections = 0;
const opened: Connection[] = [];

async function db(): Promise<Connection> {
  if (connection === undefined) {
    connection = await mongoose.createConnection(mongoUri(), { dbName: uniqueName('mongo_outbox') }).asPromise();
    opened.push(connection);
  }
  return connection;
}

afterAll(async () => {
  for (const c of opened) await c.close();
});

outboxStoreContract(`MongoOutboxStore on ${mongoLabel()}`, async () => {
  const conn = await db();
  const name = `outbox_${++collections}`;
  const repository = new CounterMongooseRepository({ connection: conn, collection: name, aggregate: Counter, outbox: true });
  const store = new MongoOutboxStore({ collections: [conn.db!.collection(name)] });
  await store.ensureIndexes();
  return { store, repository, close: async () => void (await conn.db!.collection(name).deleteMany({})) };
});

// The repository keeps every promise of the repository contract with its outbox on: tombstones
// are invisible, a removed id can be inserted again.
describeRepositoryContract(`MongooseRepository with outbox: true on ${mongoLabel()}`, async () => {
  const conn = await db();
  const used: string[] = [];
  return {
    Repository: CounterMongooseRepository as unknown as CounterRepositoryClass,
    options: () => {
      used.push(`outbox_repo_${++collections}`);
      return { connection: conn, collection: used[used.length - 1], outbox: true };
    },
    raw: async (repository: CounterRepository) => {
      const name = (repository as unknown as { collectionName: string }).collectionName;
      return conn.db!.collection(name).find({ _deleted: { $ne: true } }).sort({ _id: 1 }).toArray();
    },
    close: async () => {
      for (const name of used) await conn.db!.collection(name).deleteMany({});
    },
  };
});
