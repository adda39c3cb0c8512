import { Module, type DynamicModule } from '@nestjs/common';
import { APP_FILTER, APP_PIPE } from '@nestjs/core';
import { ClsPluginTransactional } from '@nestjs-cls/transactional';
import { ClsModule } from 'nestjs-cls';
import { HttpDrainModule } from '@ddd-kit/repository/http';
import type { Backend, UsersBackend } from './backends/backend.js';
import { ConnectionsModule } from './backends/connections.module.js';
import { fixedMachineId, memoryIdempotency, memoryReservations, memoryUsers } from './backends/memory.js';
import { mongoReservations, mongoUsers } from './backends/mongo.js';
import { postgresIdempotency, postgresMachineId, postgresReservations, postgresUsers } from './backends/postgres.js';
import { redisIdempotency, redisMachineId, redisReservations } from './backends/redis.js';
import { ApiExceptionFilter } from './common/api-exception.filter.js';
import { RequestValidationPipe } from './common/request-validation.pipe.js';
import type { AppConfig, PrepareBackend, RepositoryBackend } from './config/app-config.js';
import { HealthModule } from './health/health.module.js';
import { UsersModule } from './users/users.module.js';

/** Where the username reservations live: PREPARE_BACKEND. */
const reservationsOn: Record<PrepareBackend, (config: AppConfig) => Backend> = {
  memory: memoryReservations,
  redis: redisReservations,
  mongo: mongoReservations,
  postgres: postgresReservations,
};

/** Where the users and their read model live: REPOSITORY_BACKEND. */
const usersOn: Record<RepositoryBackend, (config: AppConfig) => UsersBackend> = {
  memory: memoryUsers,
  mongo: mongoUsers,
  postgres: postgresUsers,
};

/** Where a leased machine ID comes from: MACHINE_ID=redis or postgres (a number is fixed). */
const machineIdsFrom: Record<'redis' | 'postgres', () => Backend> = {
  redis: redisMachineId,
  postgres: postgresMachineId,
};

/**
 * Where the records of repeated requests (Idempotency-Key) live. On PostgreSQL they must be
 * in the transaction of the user row they record, so with the users; beside a repository with
 * no store of records (MongoDB), on Redis when the app has it, shared by the instances; else in
 * memory (a repeat is recognised only by the instance that ran the first).
 */
function idempotencyOn(config: AppConfig): Backend {
  if (config.repositoryBackend === 'postgres') return postgresIdempotency(config);
  if (config.prepareBackend === 'redis' || config.machineId === 'redis') return redisIdempotency(config);
  return memoryIdempotency(config);
}

/**
 * The registration service: the ddd-kit modules on the backends `config` names (one file per
 * store in backends/), `@Transactional()` on the users' store, the users API, and the HTTP rules
 * every request goes through (validation that refuses unknown fields and deep values, errors
 * answered by ApiExceptionFilter) — as providers, so they hold however the application is created.
 */
@Module({})
export class RegistrationModule {
  static forRoot(config: AppConfig): DynamicModule {
    const reservations = reservationsOn[config.prepareBackend](config);
    const users = usersOn[config.repositoryBackend](config);
    const machineIds =
      typeof config.machineId === 'number' ? fixedMachineId(config.machineId) : machineIdsFrom[config.machineId]();
    const backends = [reservations, users, machineIds, idempotencyOn(config)];
    return {
      module: RegistrationModule,
      imports: [
        // First, so that the connections close after every module using them.
        ConnectionsModule.forRoot(config, backends),
        ...backends.map((backend) => backend.module),
        // @Transactional() on the users' store (UsersService's commands).
        ClsModule.forRoot({ global: true, plugins: [new ClsPluginTransactional({ adapter: users.transactions })] }),
        UsersModule.forRoot(config, users),
        HealthModule.forRoot({ pingRedis: config.machineId === 'redis' && config.prepareBackend !== 'redis' }),
        // On app.close(): the requests already received are answered before any module lets go of a store.
        HttpDrainModule.forRoot({ graceMs: config.shutdownTimeoutMs }),
      ],
      providers: [
        { provide: APP_FILTER, useClass: ApiExceptionFilter },
        { provide: APP_PIPE, useValue: new RequestValidationPipe() },
      ],
    };
  }
}
