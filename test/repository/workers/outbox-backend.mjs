// What an outbox crash worker writes to and relays from, per backend, imported from the BUILT
// library as an application would. A backend gives: the Counter repository (writes store
// their events in the outbox), the outbox store, and a read model kept by the handler, with a
// log of every delivery (to count losses and duplicates from outside the process).
import mongoose from 'mongoose';
import { MongooseRepository } from '@ddd-kit/repository';
import { MongoOutboxStore } from '@ddd-kit/repository/outbox';
// The contract suites' Counter, from the built library by path: its entry (@ddd-kit/repository/testing)
// also holds the Jest contract suites, which load only inside Jest.
import { Counter } from '../../../libs/repository/dist/testing/counter.aggregate.js';

export { Counter };

/** The fields of the tests' CounterMongooseRepository. */
class CounterMongoRepository extends MongooseRepository {
  toDocument(counter) {
    return { label: counter.label, count: counter.count, tags: [...counter.tags] };
  }
  toAggregate(document) {
    return Counter.restore(document._id, document.label, document.count, document.tags);
  }
}

/**
 * The read model's handler: logs the delivery, then applies the event idempotently by version
 * (an older or repeated event changes nothing; a PURGE leaves a marker so nothing older
 * resurrects the entry).
 */
function mongoReadModel(db, name) {
  const deliveries = db.collection(`${name}_deliveries`);
  const read = db.collection(`${name}_read`);
  return async (events) => {
    for (const event of events) {
      await deliveries.insertOne({
        eventId: event.eventId,
        id: event.id,
        version: event.version,
        type: event.type,
        pid: process.pid,
      });
      const state = {
        version: event.version,
        deleted: event.type === 'PURGE',
        count: event.type === 'PURGE' ? null : event.snapshot.count,
      };
      const updated = await read.updateOne({ _id: event.id, version: { $lt: event.version } }, { $set: state });
      if (updated.matchedCount === 0) {
        try {
          await read.insertOne({ _id: event.id, ...state });
        } catch (error) {
          if (error.code !== 11000) throw error; // present at this version or later: nothing to do
        }
      }
    }
  };
}

export async function openOutboxBackend(backend, { dbName, collection }) {
  if (backend !== 'mongo') throw new Error(`no outbox crash backend '${backend}'`);
  const connection = await mongoose.createConnection(process.env.MONGODB_URI, { dbName }).asPromise();
  const store = new MongoOutboxStore({ collections: [connection.db.collection(collection)] });
  await store.ensureIndexes();
  const repository = new CounterMongoRepository({ connection, collection, aggregate: Counter, outbox: store });
  return { repository, store, handle: mongoReadModel(connection.db, collection), close: () => connection.close() };
}
