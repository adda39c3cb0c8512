import { MongoPrepareKeyFactory, PrepareKeyModule } from '@ddd-kit/prepare-key';
import { RepositoryModule } from '@ddd-kit/repository';
import mongoose, { type Connection } from 'mongoose';
import type { AppConfig } from '../config/app-config.js';
import { outboxOptions } from '../outbox/outbox-options.js';
import { MongoUserReadModel } from '../read-model/mongo-user-read-model.js';
import { UserReadModel } from '../read-model/user-read-model.js';
import { User } from '../users/user.aggregate.js';
import { UsernamePrepareKey } from '../users/username.prepare-key.js';
import { UserMongooseRepository } from '../users/user.repository.js';
import { required, withoutTransactions, type Backend, type StoreConnection, type UsersBackend } from './backend.js';

// MongoDB: the username reservations, and the users with their read model, on one connection.

export const MONGO_CONNECTION = Symbol('MONGO_CONNECTION');

export const mongoConnection: StoreConnection<Connection> = {
  token: MONGO_CONNECTION,
  open: (config) =>
    mongoose
      .createConnection(required(config.mongodbUri, 'MONGODB_URI'), { serverSelectionTimeoutMS: 5000 })
      .asPromise(),
  close: (connection) => connection.close(),
};

export const mongoReservations = (): Backend => ({
  connection: mongoConnection,
  module: PrepareKeyModule.forRootAsync({
    inject: [MONGO_CONNECTION],
    useFactory: (connection: Connection) => ({ factory: new MongoPrepareKeyFactory(connection) }),
  }),
});

export const mongoUsers = (config: AppConfig): UsersBackend => ({
  connection: mongoConnection,
  module: RepositoryModule.forRootAsync({
    // UsernamePrepareKey: built after the reservations (see UsersBackend).
    inject: [MONGO_CONNECTION, UsernamePrepareKey],
    // Each write keeps its events inside the user's document; MongoDB gives no signal on a write, so the relay polls often.
    useFactory: (connection: Connection) => ({ connection, outbox: outboxOptions(config, { pollIntervalMs: 200 }) }),
  }),
  repository: { aggregate: User, repository: UserMongooseRepository },
  providers: [
    {
      provide: UserReadModel,
      inject: [MONGO_CONNECTION],
      useFactory: async (connection: Connection) => {
        const readModel = new MongoUserReadModel(connection);
        await readModel.ensureIndexes();
        return readModel;
      },
    },
  ],
  transactions: withoutTransactions(),
});
