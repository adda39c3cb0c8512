import { IdGeneratorModule } from '@ddd-kit/id-generator';
import { IdempotencyModule, MemoryIdempotencyStore } from '@ddd-kit/idempotency';
import { MemoryPrepareKeyFactory, PrepareKeyModule } from '@ddd-kit/prepare-key';
import { RepositoryModule } from '@ddd-kit/repository';
import { InMemoryUserReadModel } from '../read-model/in-memory-user-read-model.js';
import { UserReadModel } from '../read-model/user-read-model.js';
import { User } from '../users/user.aggregate.js';
import { UsernamePrepareKey } from '../users/username.prepare-key.js';
import type { AppConfig } from '../config/app-config.js';
import {
  idempotencyOptions,
  MACHINE_ID_NAMESPACE,
  withoutTransactions,
  type Backend,
  type UsersBackend,
} from './backend.js';

// In this process: what `npm start` runs with nothing configured. Nothing is shared with another instance.

export const memoryReservations = (): Backend => ({
  // Built at bootstrap, not when the module is declared.
  module: PrepareKeyModule.forRootAsync({ useFactory: () => ({ factory: new MemoryPrepareKeyFactory() }) }),
});

export const memoryUsers = (): UsersBackend => ({
  // No outbox: there is nothing durable to gain, events are delivered in process before the request answers.
  // UsernamePrepareKey: built after the reservations (see UsersBackend).
  module: RepositoryModule.forRootAsync({ inject: [UsernamePrepareKey], useFactory: () => ({}) }),
  repository: User,
  providers: [{ provide: UserReadModel, useClass: InMemoryUserReadModel }],
  transactions: withoutTransactions(),
});

/** MACHINE_ID=<number>: fixed, so distinct for every instance that shares a repository. */
export const fixedMachineId = (machineId: number): Backend => ({
  module: IdGeneratorModule.forRoot({ namespace: MACHINE_ID_NAMESPACE, machine: machineId }),
});

/** The records of repeated requests in this process: enough where nothing else is shared. */
export const memoryIdempotency = (config: AppConfig): Backend => ({
  module: IdempotencyModule.forRootAsync({
    useFactory: () => idempotencyOptions(config, new MemoryIdempotencyStore()),
  }),
});
