import { randomBytes } from 'node:crypto';
import { Logger, type DynamicModule, type Provider } from '@nestjs/common';
import { NoOpTransactionalAdapter, type TransactionalAdapter } from '@nestjs-cls/transactional';
import type { IdempotencyModuleOptions, IdempotencyStore } from '@ddd-kit/idempotency';
import type { RepositoryFeature } from '@ddd-kit/repository';
import { InvalidConfigError, type AppConfig } from '../config/app-config.js';
import type { User } from '../users/user.aggregate.js';

/** How the app reaches one store: the token its client is provided under, how to open and close it. */
export interface StoreConnection<C = unknown> {
  token: symbol;
  open(config: AppConfig): Promise<C>;
  close(connection: C): Promise<unknown>;
}

/** One backend choice: the store it runs on (none in memory) and the ddd-kit module configured on it. */
export interface Backend {
  connection?: StoreConnection;
  module: DynamicModule;
}

/**
 * The users on one store: `module` is RepositoryModule on it, and UsersModule adds the rest.
 * RepositoryModule's options inject UsernamePrepareKey so that they wait for the reservations:
 * the User repository looks up the PrepareKey of its `@UniqueKey` as it is built (Nest builds
 * modules concurrently), and would find none while a store connection still held them up.
 */
export interface UsersBackend extends Backend {
  /** User's entry in RepositoryModule.forFeature: the store's repository class (User alone in memory). */
  repository: RepositoryFeature<User> | typeof User;
  /** The UserReadModel on the same store. */
  providers: Provider[];
  /** What `@Transactional()` runs a command in (ClsPluginTransactional's adapter). */
  transactions: TransactionalAdapter<any, any, any>;
}

/**
 * The adapter of a store whose writes the app does not group (memory; MongoDB, where the
 * repository writes a user and its events in one document): `@Transactional()` runs the method
 * as it is, each write stands alone and the repository keeps the safe order.
 */
export const withoutTransactions = (): TransactionalAdapter<any, any, any> =>
  new NoOpTransactionalAdapter({ tx: 'none', disableWarning: true });

/** The namespace of the user IDs' machine IDs, wherever they come from. */
export const MACHINE_ID_NAMESPACE = 'registration';

/** A store's URL: loadConfig asks for it already; this covers a config built in code. */
export function required(url: string | undefined, variable: string): string {
  if (url === undefined) throw new InvalidConfigError(variable, 'is required by the backends chosen');
  return url;
}

/**
 * IdempotencyModule's options on `store`: the secret a kept registration's user secret is
 * encrypted under is IDEMPOTENCY_SECRET, or without it one of this process's own (a repeat that
 * reaches another instance then runs into a record it cannot open: set it when instances share
 * a store).
 */
export function idempotencyOptions(config: AppConfig, store: IdempotencyStore): IdempotencyModuleOptions {
  if (config.idempotencySecret === undefined && config.repositoryBackend !== 'memory')
    new Logger('Idempotency').warn(
      'IDEMPOTENCY_SECRET is not set: a repeated registration reaching another instance cannot be answered',
    );
  return { store, encryptionKey: config.idempotencySecret ?? randomBytes(32) };
}
