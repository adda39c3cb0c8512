import { Module, type DynamicModule, type OnModuleInit } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { RepositoryModule } from '@ddd-kit/repository';
import type { Connection } from 'mongoose';
import type { AppConfig } from '../config/app-config.js';
import { MONGO_CONNECTION } from '../infrastructure/infrastructure.constants.js';
import { InMemoryUserReadModel } from '../read-model/in-memory-user-read-model.js';
import { MongoUserReadModel } from '../read-model/mongo-user-read-model.js';
import { UserReadModel } from '../read-model/user-read-model.js';
import { UserReadModelProjector } from '../read-model/user-read-model.projector.js';
import { DEFAULT_RECONCILE_GRACE_MS, RECONCILE_GRACE_MS, RegistrationReconciler } from '../reconciliation/registration-reconciler.js';
import { User } from './user.aggregate.js';
import { UserMongooseRepository } from './user.repository.js';
import { UsernamesController } from './usernames.controller.js';
import { UsersController } from './users.controller.js';
import { UsersService } from './users.service.js';

@Module({})
export class UsersModule implements OnModuleInit {
  constructor(private readonly moduleRef: ModuleRef) {}

  static forRoot(config: AppConfig): DynamicModule {
    const mongo = config.repositoryBackend === 'mongo';
    return {
      module: UsersModule,
      imports: [RepositoryModule.forFeature([mongo ? { aggregate: User, repository: UserMongooseRepository } : User])],
      controllers: [UsersController, UsernamesController],
      providers: [
        UsersService,
        UserReadModelProjector,
        RegistrationReconciler,
        { provide: RECONCILE_GRACE_MS, useValue: config.reconcileGraceMs ?? DEFAULT_RECONCILE_GRACE_MS },
        {
          provide: UserReadModel,
          inject: [MONGO_CONNECTION],
          useFactory: (connection: Connection | null) =>
            mongo && connection ? new MongoUserReadModel(connection) : new InMemoryUserReadModel(),
        },
      ],
      exports: [UsersService, UserReadModel, RegistrationReconciler, RepositoryModule],
    };
  }

  async onModuleInit(): Promise<void> {
    const readModel = this.moduleRef.get(UserReadModel);
    if (readModel instanceof MongoUserReadModel) await readModel.ensureIndexes();
  }
}
