import { afterAll, beforeAll } from '@jest/globals';
import mongoose, { type Connection } from 'mongoose';
import { MongoOutboxStore } from '@ddd-kit/repository/outbox';
import { mongoLabel, mongoUri, uniqueName } from '../support/servers.js';
import { Counter, CounterMongooseRepository } from './support/counter.aggregate.js';
import { describeRelayTiming } from './support/outbox-relay-timing.support.js';

let connection: Connection;
let n = 0;
beforeAll(async () => {
  connection = await mongoose.createConnection(mongoUri(), { dbName: uniqueName('outbox_relay_timing') }).asPromise();
});
afterAll(async () => {
  await connection?.close();
});

describeRelayTiming(`MongoOutboxStore on ${mongoLabel()} (polling)`, async () => {
  const collection = `counters_${++n}`;
  const store = new MongoOutboxStore({ collections: [connection.db!.collection(collection)] });
  await store.ensureIndexes();
  const repository = new CounterMongooseRepository({ connection, collection, aggregate: Counter, outbox: store });
  return { store, repository, wakes: false, close: async () => {} };
});
