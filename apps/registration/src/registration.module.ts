import { Module, ValidationPipe, type DynamicModule } from '@nestjs/common';
import { APP_FILTER, APP_PIPE } from '@nestjs/core';
import { IdGeneratorModule, PostgresMachineIdDistributor, RedisMachineIdDistributor } from '@ddd-kit/id-generator';
import {
  MemoryPrepareKeyFactory,
  MongoPrepareKeyFactory,
  PostgresPrepareKeyFactory,
  PrepareKeyModule,
  RedisPrepareKeyFactory,
} from '@ddd-kit/prepare-key';
import { RepositoryModule } from '@ddd-kit/repository';
import type { Redis } from 'ioredis';
import type { Connection } from 'mongoose';
import type { Pool } from 'pg';
import { HttpErrorFilter } from './common/http-exception.filter.js';
import type { AppConfig } from './config/app-config.js';
import { HealthModule } from './health/health.module.js';
import { MONGO_CONNECTION, POSTGRES_POOL, REDIS_CLIENT } from './infrastructure/infrastructure.constants.js';
import { InfrastructureModule } from './infrastructure/infrastructure.module.js';
import { outboxOptions } from './outbox/outbox-options.js';
import { UsersModule } from './users/users.module.js';

/** Reservations of this app in a Redis it may share with others. */
export const DEFAULT_PREPARE_KEY_PREFIX = 'registration:prepare';

/**
 * The registration service: the three ddd-kit modules wired onto the backends `config` names,
 * the users API, and the HTTP rules every request goes through (validation that refuses
 * unknown fields, bad input mapped to 400) — as providers, so they hold however the
 * application is created.
 */
@Module({})
export class RegistrationModule {
  static forRoot(config: AppConfig): DynamicModule {
    return {
      module: RegistrationModule,
      imports: [
        InfrastructureModule.forRoot(config),
        PrepareKeyModule.forRootAsync({
          inject: [REDIS_CLIENT, MONGO_CONNECTION, POSTGRES_POOL],
          useFactory: (redis: Redis | null, mongo: Connection | null, postgres: Pool | null) => ({
            factory:
              config.prepareBackend === 'redis'
                ? new RedisPrepareKeyFactory(redis!, {
                    keyPrefix: `${config.prepareKeyPrefix ?? DEFAULT_PREPARE_KEY_PREFIX}:`,
                  })
                : config.prepareBackend === 'mongo'
                  ? new MongoPrepareKeyFactory(mongo!)
                  : config.prepareBackend === 'postgres'
                    ? // The pool the users live on too: reservations and users commit in one transaction.
                      new PostgresPrepareKeyFactory(postgres!, { table: 'username_reservations' })
                    : new MemoryPrepareKeyFactory(),
          }),
        }),
        IdGeneratorModule.forRootAsync({
          inject: [REDIS_CLIENT, POSTGRES_POOL],
          useFactory: (redis: Redis | null, postgres: Pool | null) => ({
            namespace: 'registration',
            machine:
              config.machineId === 'redis'
                ? new RedisMachineIdDistributor(redis!)
                : config.machineId === 'postgres'
                  ? new PostgresMachineIdDistributor(postgres!)
                  : config.machineId,
          }),
        }),
        RepositoryModule.forRootAsync({
          inject: [MONGO_CONNECTION, POSTGRES_POOL],
          useFactory: (mongo: Connection | null, postgres: Pool | null) => ({
            ...(mongo ? { connection: mongo } : {}),
            ...(postgres ? { postgres: { pool: postgres } } : {}),
            // The outbox of a shared repository (PostgreSQL or MongoDB); none in memory.
            outbox: outboxOptions(config) ?? false,
          }),
        }),
        UsersModule.forRoot(config),
        HealthModule,
      ],
      providers: [
        { provide: APP_FILTER, useClass: HttpErrorFilter },
        {
          provide: APP_PIPE,
          useValue: new ValidationPipe({
            whitelist: true,
            forbidNonWhitelisted: true,
            transform: true,
            forbidUnknownValues: true,
            stopAtFirstError: true,
          }),
        },
      ],
    };
  }
}
