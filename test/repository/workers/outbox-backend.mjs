// What an outbox crash worker writes to and relays from, per backend, imported from the BUILT
// library as an application would. A backend gives: the Counter repository (writes store
// their events in the outbox), the outbox store, and a read model kept by the handler, with a
// log of every delivery (to count losses and duplicates from outside the process).
import mongoose from 'mongoose';
import pg from 'pg';
import { MongooseRepository, PostgresRepository } from '@ddd-kit/repository';
import { MongoOutboxStore } from '@ddd-kit/repository/outbox';
import { PostgresWalOutboxStore } from '@ddd-kit/repository/postgres-wal';
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

/** The fields of the tests' CounterPostgresRepository. */
class CounterPgRepository extends PostgresRepository {
  columns = { label: 'text NOT NULL', count: 'integer NOT NULL', tags: 'jsonb NOT NULL' };
  toRow(counter) {
    return { label: counter.label, count: counter.count, tags: [...counter.tags] };
  }
  toAggregate(row) {
    return Counter.restore(row.id, row.label, row.count, row.tags);
  }
}

/** The WAL outbox's handler: logs every delivery (with the process) in a table, in the order they happen. */
function pgDeliveryLog(pool, table) {
  return async (events) => {
    for (const event of events)
      await pool.query(`INSERT INTO ${table} (event_id, id, version, pid) VALUES ($1, $2, $3, $4)`, [
        event.eventId,
        event.id,
        event.version,
        process.pid,
      ]);
  };
}

/** The outbox without a table (PostgresWalOutboxStore) on `url`: slot, prefix and tables named after `collection`. */
async function openWalBackend({ url, collection }) {
  const pool = new pg.Pool({ connectionString: url, max: 6 });
  const store = new PostgresWalOutboxStore({
    pool,
    slot: collection,
    prefix: collection,
    deadLetterTable: `${collection}_dead`,
    retry: { initialMs: 20, maxMs: 200 },
  });
  const repository = new CounterPgRepository({ aggregate: Counter, pool, table: collection, outbox: store });
  await pool.query(
    `CREATE TABLE IF NOT EXISTS ${collection}_deliveries (seq bigserial PRIMARY KEY, event_id text, id text, version int, pid int)`,
  );
  return { repository, store, handle: pgDeliveryLog(pool, `${collection}_deliveries`), close: () => pool.end() };
}

export async function openOutboxBackend(backend, { dbName, collection, url }) {
  if (backend === 'postgres-wal') return openWalBackend({ url, collection });
  if (backend !== 'mongo') throw new Error(`no outbox crash backend '${backend}'`);
  const connection = await mongoose.createConnection(process.env.MONGODB_URI, { dbName }).asPromise();
  const store = new MongoOutboxStore({ collections: [connection.db.collection(collection)] });
  await store.ensureIndexes();
  const repository = new CounterMongoRepository({ connection, collection, aggregate: Counter, outbox: store });
  return { repository, store, handle: mongoReadModel(connection.db, collection), close: () => connection.close() };
}
