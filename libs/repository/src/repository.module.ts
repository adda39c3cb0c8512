import { Module, type DynamicModule } from '@nestjs/common';
import type { RepositoryFeature, RepositoryFeatureOptions } from './interfaces/repository-feature.interface.js';
import type {
  RepositoryModuleAsyncOptions,
  RepositoryModuleOptions,
} from './interfaces/repository-module-options.interface.js';
import { RepositoryCoreModule } from './repository-core.module.js';
import { createRepositoryProviders, normalizeFeatures } from './repository.providers.js';

/**
 *   RepositoryModule.forRoot({ uri: 'mongodb://…/app' })        // or {} for in-memory only
 *   RepositoryModule.forFeature([
 *     { aggregate: User, repository: UserMongooseRepository },  // your class
 *     Order,                                                     // a ready-made InMemoryRepository
 *   ])
 *   constructor(@InjectRepository(User) users: IRepository<string, User>)   // or inject UserMongooseRepository
 */
@Module({})
export class RepositoryModule {
  /** Global: the backends, the data-sync event bus and the `@OnDataSync` handlers. */
  static forRoot(options: RepositoryModuleOptions = {}): DynamicModule {
    return { module: RepositoryModule, imports: [RepositoryCoreModule.forRoot(options)] };
  }

  static forRootAsync(options: RepositoryModuleAsyncOptions): DynamicModule {
    return { module: RepositoryModule, imports: [RepositoryCoreModule.forRootAsync(options)] };
  }

  /**
   * Registers one repository per aggregate, injectable with `@InjectRepository(Aggregate)` (and
   * by its class). Repository classes are constructed by Nest: their dependencies come from
   * global modules or from `options.imports`.
   */
  static forFeature(
    entries: ReadonlyArray<Function | RepositoryFeature>,
    options: RepositoryFeatureOptions = {},
  ): DynamicModule {
    const providers = normalizeFeatures(entries).flatMap(createRepositoryProviders);
    return {
      module: RepositoryModule,
      imports: options.imports ?? [],
      providers,
      exports: providers.map((provider) => (provider as { provide: unknown }).provide as string | Function),
    };
  }
}
