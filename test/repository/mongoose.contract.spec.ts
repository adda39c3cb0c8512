import mongoose, { type Connection } from 'mongoose';
import { mongoUri, uniqueName } from '../support/servers.js';
import { CounterMongooseRepository } from './support/counter.aggregate.js';
import { describeReconciliationContract } from './support/reconciliation-contract.js';
import { describeRepositoryContract, type CounterRepository, type CounterRepositoryClass, type RepositoryHarness } from './support/repository-contract.js';

// Every suite on its own database, every repository on its own collection, dropped at the end.
const onMongo = async (): Promise<RepositoryHarness> => {
  const connection: Connection = await mongoose.createConnection(mongoUri(), { dbName: uniqueName('repository_contract') }).asPromise();
  let collections = 0;
  return {
    Repository: CounterMongooseRepository as unknown as CounterRepositoryClass,
    options: () => ({ connection, collection: `counters_${++collections}` }),
    raw: async (repository: CounterRepository) => {
      const name = (repository as unknown as { collectionName: string }).collectionName;
      return connection.db!.collection(name).find({}).sort({ _id: 1 }).toArray();
    },
    close: async () => {
      await connection.dropDatabase().catch(() => undefined);
      await connection.close();
    },
  };
};

describeRepositoryContract('MongooseRepository', onMongo);
describeReconciliationContract('MongooseRepository', onMongo);
