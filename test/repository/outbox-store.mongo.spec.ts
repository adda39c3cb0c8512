// MongoOutboxStore: the outbox kept inside each aggregate's document by a MongooseRepository
// given the store as its `outbox`, on the MongoDB-wire server of the run (the jongodb emulator
// unless MONGODB_URI names a MongoDB).
import { afterAll, beforeAll } from '@jest/globals';
import mongoose, { type Connection } from 'mongoose';
import { MongoOutboxStore } from '@ddd-kit/repository';
import { mongoLabel, mongoUri, uniqueName } from '../support/servers.js';
import { Counter, CounterMongooseRepository } from './support/counter.aggregate.js';
import { outboxStoreContract } from './support/outbox-store-contract.js';

let connection: Connection;
let n = 0;
beforeAll(async () => {
  connection = await mongoose.createConnection(mongoUri(), { dbName: uniqueName('outbox_store') }).asPromise();
});
afterAll(async () => {
  await connection?.close();
});

outboxStoreContract(`MongoOutboxStore on ${mongoLabel()}`, async () => {
  const collection = `counters_${++n}`;
  const store = new MongoOutboxStore({ collections: [connection.db!.collection(collection)] });
  await store.ensureIndexes();
  const repository = new CounterMongooseRepository({ connection, collection, aggregate: Counter, outbox: store });
  return { store, repository, close: async () => void (await connection.db!.collection(collection).deleteMany({})) };
});
