import { Module, type DynamicModule } from '@nestjs/common';
import { RepositoryModule } from '@ddd-kit/repository';
import type { UsersBackend } from '../backends/backend.js';
import type { AppConfig } from '../config/app-config.js';
import { UserReadModel } from '../read-model/user-read-model.js';
import { UserReadModelProjector } from '../read-model/user-read-model.projector.js';
import {
  DEFAULT_RECONCILE_GRACE_MS,
  RECONCILE_GRACE_MS,
  RegistrationReconciler,
} from '../reconciliation/registration-reconciler.js';
import { UsernamesController } from './usernames.controller.js';
import { UsersController } from './users.controller.js';
import { UsersService } from './users.service.js';

/** The users API, on the store `users` names: its User repository and read model. */
@Module({})
export class UsersModule {
  static forRoot(config: AppConfig, users: UsersBackend): DynamicModule {
    return {
      module: UsersModule,
      imports: [RepositoryModule.forFeature([users.repository])],
      controllers: [UsersController, UsernamesController],
      providers: [
        ...users.providers,
        UsersService,
        UserReadModelProjector,
        RegistrationReconciler,
        { provide: RECONCILE_GRACE_MS, useValue: config.reconcileGraceMs ?? DEFAULT_RECONCILE_GRACE_MS },
      ],
      exports: [UsersService, UserReadModel, RegistrationReconciler, RepositoryModule],
    };
  }
}
