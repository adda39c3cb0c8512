import { Module, type DynamicModule, type OnModuleInit } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { RepositoryModule } from '@ddd-kit/repository';
import type { Connection } from 'mongoose';
import type { Pool } from 'pg';
import type { AppConfig } from '../config/app-config.js';
import { MONGO_CONNECTION, POSTGRES_POOL } from '../infrastructure/infrastructure.constants.js';
import { InMemoryUserReadModel } from '../read-model/in-memory-user-read-model.js';
import { MongoUserReadModel } from '../read-model/mongo-user-read-model.js';
import { PostgresUserReadModel } from '../read-model/postgres-user-read-model.js';
import { UserReadModel } from '../read-model/user-read-model.js';
import { UserReadModelProjector } from '../read-model/user-read-model.projector.js';
import {
  DEFAULT_RECONCILE_GRACE_MS,
  RECONCILE_GRACE_MS,
  RegistrationReconciler,
} from '../reconciliation/registration-reconciler.js';
import { User } from './user.aggregate.js';
import { RequestTransaction } from './request-transaction.js';
import { UserMongooseRepository, UserPostgresRepository } from './user.repository.js';
import { UsernamesController } from './usernames.controller.js';
import { UsersController } from './users.controller.js';
import { UsersService } from './users.service.js';

@Module({})
export class UsersModule implements OnModuleInit {
  constructor(private readonly moduleRef: ModuleRef) {}

  static forRoot(config: AppConfig): DynamicModule {
    const repository =
      config.repositoryBackend === 'mongo'
        ? { aggregate: User, repository: UserMongooseRepository }
        : config.repositoryBackend === 'postgres'
          ? { aggregate: User, repository: UserPostgresRepository }
          : User;
    return {
      module: UsersModule,
      imports: [RepositoryModule.forFeature([repository])],
      controllers: [UsersController, UsernamesController],
      providers: [
        UsersService,
        RequestTransaction,
        UserReadModelProjector,
        RegistrationReconciler,
        { provide: RECONCILE_GRACE_MS, useValue: config.reconcileGraceMs ?? DEFAULT_RECONCILE_GRACE_MS },
        {
          provide: UserReadModel,
          inject: [MONGO_CONNECTION, POSTGRES_POOL],
          useFactory: (connection: Connection | null, pool: Pool | null) =>
            config.repositoryBackend === 'mongo' && connection
              ? new MongoUserReadModel(connection)
              : config.repositoryBackend === 'postgres' && pool
                ? new PostgresUserReadModel(pool)
                : new InMemoryUserReadModel(),
        },
      ],
      exports: [UsersService, UserReadModel, RegistrationReconciler, RepositoryModule],
    };
  }

  async onModuleInit(): Promise<void> {
    const readModel = this.moduleRef.get(UserReadModel);
    if (readModel instanceof MongoUserReadModel) await readModel.ensureIndexes();
    if (readModel instanceof PostgresUserReadModel) await readModel.ensureTable();
  }
}
