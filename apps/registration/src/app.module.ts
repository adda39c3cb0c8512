import { Module, type DynamicModule } from '@nestjs/common';
import { IdGeneratorModule, RedisMachineIdDistributor } from '@ddd-kit/id-generator';
import { MemoryPrepareKeyFactory, MongoPrepareKeyFactory, PrepareKeyModule, RedisPrepareKeyFactory } from '@ddd-kit/prepare-key';
import { RepositoryModule } from '@ddd-kit/repository';
import type { Redis } from 'ioredis';
import type { Connection } from 'mongoose';
import { loadConfig, type AppConfig } from './config/app-config.js';
import { HealthController } from './health/health.controller.js';
import { MONGO_CONNECTION, REDIS_CLIENT } from './infrastructure/infrastructure.constants.js';
import { InfrastructureModule } from './infrastructure/infrastructure.module.js';
import { UsersModule } from './users/users.module.js';

/**
 * The registration service. `AppModule.forRoot(config)` wires the three ddd-kit modules onto
 * the backends the configuration names; `AppModule` itself is the same, configured from the
 * environment when first imported.
 */
/** Reservations of this app in a Redis it may share with others. */
export const DEFAULT_PREPARE_KEY_PREFIX = 'registration:prepare';

@Module({})
export class AppModule {
  static forRoot(config: AppConfig = loadConfig()): DynamicModule {
    return {
      module: AppModule,
      imports: [
        InfrastructureModule.forRoot(config),
        PrepareKeyModule.forRootAsync({
          inject: [REDIS_CLIENT, MONGO_CONNECTION],
          useFactory: (redis: Redis | null, mongo: Connection | null) => ({
            factory:
              config.prepareBackend === 'redis'
                ? new RedisPrepareKeyFactory(redis!, { prefix: config.prepareKeyPrefix ?? DEFAULT_PREPARE_KEY_PREFIX })
                : config.prepareBackend === 'mongo'
                  ? new MongoPrepareKeyFactory(mongo!)
                  : new MemoryPrepareKeyFactory(),
          }),
        }),
        IdGeneratorModule.forRootAsync({
          inject: [REDIS_CLIENT],
          useFactory: (redis: Redis | null) => ({
            namespace: 'registration',
            machine: config.machineId === 'redis' ? new RedisMachineIdDistributor(redis!) : config.machineId,
          }),
        }),
        RepositoryModule.forRootAsync({
          inject: [MONGO_CONNECTION],
          useFactory: (mongo: Connection | null) => (mongo ? { connection: mongo } : {}),
        }),
        UsersModule.forRoot(config),
      ],
      controllers: [HealthController],
    };
  }
}
