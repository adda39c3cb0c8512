import mongoose, { type Connection } from 'mongoose';
import { mongoUri, uniqueName } from '../support/servers.js';
import { CounterMongooseRepository } from './support/counter.aggregate.js';
import { describeReconciliationContract } from './support/reconciliation-contract.js';
import { describeRepositoryContract, type CounterRepository, type CounterRepositoryClass, type RepositoryHarness } from './support/repository-contract.js';

// Every suite on its own database, every repository on its own collection, emptied at the end
// (the test server, an emulator, has no drop commands).
const onMongo = async (): Promise<RepositoryHarness> => {
  const connection: Connection = await mongoose.createConnection(mongoUri(), { dbName: uniqueName('repository_contract') }).asPromise();
  const used: string[] = [];
  return {
    Repository: CounterMongooseRepository as unknown as CounterRepositoryClass,
    options: () => {
      used.push(`counters_${used.length + 1}`);
      return { connection, collection: used[used.length - 1] };
    },
    raw: async (repository: CounterRepository) => {
      const name = (repository as unknown as { collectionName: string }).collectionName;
      return connection.db!.collection(name).find({}).sort({ _id: 1 }).toArray();
    },
    close: async () => {
      try {
        for (const name of used) await connection.db!.collection(name).deleteMany({});
      } finally {
        await connection.close();
      }
    },
  };
};

describeRepositoryContract('MongooseRepository', onMongo);
describeReconciliationContract('MongooseRepository', onMongo);
