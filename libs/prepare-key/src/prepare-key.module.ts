import { Module } from '@nestjs/common';
import type { DynamicModule } from '@nestjs/common';
import type {
  PrepareKeyFeature,
  PrepareKeyModuleAsyncOptions,
  PrepareKeyModuleOptions,
} from './interfaces/prepare-key-module-options.interface.js';
import { PrepareKeyCoreModule } from './prepare-key-core.module.js';
import { createFeatureProviders } from './prepare-key.providers.js';

/**
 * ```ts
 * @Module({ imports: [PrepareKeyModule.forRoot({ factory: new MemoryPrepareKeyFactory() })] })
 * export class AppModule {}
 * ```
 * forRoot makes every @PreparableKey class the application has imported injectable, with
 * no list to keep; forFeature adds keys by class or bare name.
 */
@Module({})
export class PrepareKeyModule {
  static forRoot(options: PrepareKeyModuleOptions = {}): DynamicModule {
    return rootModule(PrepareKeyCoreModule.forRoot(options));
  }

  static forRootAsync(options: PrepareKeyModuleAsyncOptions): DynamicModule {
    return rootModule(PrepareKeyCoreModule.forRootAsync(options));
  }

  /** Keys by class (`UsernamePrepareKey`) or by bare name (`'sku'`, a plain PrepareKey), exported by this module. */
  static forFeature(keys: PrepareKeyFeature[]): DynamicModule {
    const providers = createFeatureProviders(keys);
    return {
      module: PrepareKeyModule,
      providers,
      exports: providers.map((p) => (p as { provide: string }).provide),
    };
  }
}

function rootModule(core: DynamicModule): DynamicModule {
  // Re-exported so that, with isGlobal: false, the module importing forRoot still sees the keys.
  return { module: PrepareKeyModule, imports: [core], exports: [core] };
}
