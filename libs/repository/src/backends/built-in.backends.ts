import type { Provider } from '@nestjs/common';
import type { RepositoryModuleOptions } from '../interfaces/repository-module-options.interface.js';
import { MemoryBackend } from './memory/memory.backend.js';
import { validateMongooseBackendOptions } from './mongoose/mongoose.backend-options.js';
import { MongooseBackend } from './mongoose/mongoose.backend.js';
import { validatePostgresBackendOptions } from './postgres/postgres.backend-options.js';
import { PostgresBackend, postgresPoolProvider } from './postgres/postgres.backend.js';
import type { RepositoryBackend } from './repository-backend.interface.js';

// The backends RepositoryModule builds from its own options: the only place that names them.

/** Throws (through `fail`) for options of the built-in backends that cannot work. */
export function validateBuiltInBackendOptions(options: RepositoryModuleOptions, fail: (what: string) => never): void {
  validateMongooseBackendOptions(options, fail);
  validatePostgresBackendOptions(options, fail);
}

/** Memory always; MongoDB with `uri` or `connection`; PostgreSQL with `postgres`. */
export function createBuiltInBackends(options: RepositoryModuleOptions): RepositoryBackend[] {
  const backends: RepositoryBackend[] = [new MemoryBackend()];
  if (options.uri !== undefined || options.connection !== undefined) backends.push(new MongooseBackend(options));
  if (options.postgres !== undefined) backends.push(new PostgresBackend(options.postgres));
  return backends;
}

/** Tokens the built-in backends provide (the pool under getRepositoryPoolToken()). */
export const builtInBackendProviders: Provider[] = [postgresPoolProvider];
