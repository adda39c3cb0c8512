import {
  Inject,
  Logger,
  Module,
  type DynamicModule,
  type OnApplicationShutdown,
  type OnModuleInit,
  type Provider,
} from '@nestjs/common';
import { AggregateIdGeneratorRegistrar } from '../aggregate/aggregate-id-generator-registrar.js';
import { IdGeneratorOptionsError } from '../errors.js';
import { GlobalIdGenerator } from '../global/global-id-generator.js';
import { registerIdGenerators } from '../global/id-generator.registry.js';
import { MachineIdHolder } from '../machine/machine-id-holder.js';
import { ID_GENERATOR_MACHINE_ID_STORE, ID_GENERATOR_MODULE_OPTIONS } from './id-generator.constants.js';
import type {
  IdGeneratorModuleAsyncOptions,
  IdGeneratorModuleForRootOptions,
  IdGeneratorModuleOptions,
  IdGeneratorOptionsFactory,
} from './id-generator-options.interface.js';
import { createIdGeneratorProviders, exportedTokens, type OwnedMachineIdStore } from './id-generator.providers.js';

const logger = new Logger('IdGeneratorModule');

/**
 * Owns the machine ID: acquires it while the providers are built, makes the static shortcuts
 * (generateGlobalId, generateId) reach this module once initialised, and on shutdown detaches
 * them, stops the heartbeat, gives the machine ID back and then closes the store client it
 * opened itself (`machine: { redis }`), in that order.
 *
 * The release waits for `onApplicationShutdown`, Nest's last phase, which runs after `app.close()`
 * closed the HTTP server: every request the server took is answered (or its connection cut) by
 * then, so none meets a released ID. `onModuleDestroy` runs before the server closes, while
 * requests are still coming in.
 */
@Module({})
export class IdGeneratorCoreModule implements OnModuleInit, OnApplicationShutdown {
  private unregister: (() => void) | undefined;

  // Explicit tokens: no reliance on emitted design-type metadata.
  constructor(
    @Inject(MachineIdHolder) private readonly holder: MachineIdHolder,
    @Inject(GlobalIdGenerator) private readonly globalIdGenerator: GlobalIdGenerator,
    @Inject(AggregateIdGeneratorRegistrar) private readonly registrar: AggregateIdGeneratorRegistrar,
    @Inject(ID_GENERATOR_MACHINE_ID_STORE) private readonly store: OwnedMachineIdStore | null,
  ) {}

  static forRoot(options: IdGeneratorModuleForRootOptions = {}): DynamicModule {
    const { global, ...rest } = options ?? {};
    const names = Object.keys(rest.generators ?? {});
    const providers: Provider[] = [
      { provide: ID_GENERATOR_MODULE_OPTIONS, useValue: rest },
      ...createIdGeneratorProviders(names),
    ];
    return { module: IdGeneratorCoreModule, global: global ?? true, providers, exports: exportedTokens(names) };
  }

  static forRootAsync(options: IdGeneratorModuleAsyncOptions): DynamicModule {
    if (!options || (!options.useFactory && !options.useClass && !options.useExisting)) {
      throw new IdGeneratorOptionsError(
        'IdGeneratorModule.forRootAsync needs one of useFactory, useClass or useExisting',
      );
    }
    const names = options.generatorNames ?? [];
    if (!Array.isArray(names) || names.some((n) => typeof n !== 'string' || n.length === 0)) {
      throw new IdGeneratorOptionsError(
        'IdGeneratorModule.forRootAsync: generatorNames must be an array of non-empty strings',
      );
    }
    const providers: Provider[] = [...asyncOptionsProviders(options), ...createIdGeneratorProviders(names)];
    return {
      module: IdGeneratorCoreModule,
      global: options.global ?? true,
      imports: options.imports ?? [],
      providers,
      exports: exportedTokens(names),
    };
  }

  onModuleInit(): void {
    this.unregister = registerIdGenerators({ global: this.globalIdGenerator, registrar: this.registrar });
  }

  async onApplicationShutdown(): Promise<void> {
    this.unregister?.();
    this.unregister = undefined;
    try {
      // The holder logs the release (or that the ID was no longer held).
      await this.holder.release();
    } catch (error) {
      // The ID stays held until the distributor reclaims it after its safe-guard period.
      logger.error(
        `Releasing machine ID ${this.holder.machineId} failed: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
    // The module's own client (machine: { redis }) goes only now, after the release.
    await this.store?.close();
  }
}

function asyncOptionsProviders(options: IdGeneratorModuleAsyncOptions): Provider[] {
  if (options.useFactory) {
    return [{ provide: ID_GENERATOR_MODULE_OPTIONS, useFactory: options.useFactory, inject: options.inject ?? [] }];
  }
  const factoryClass = (options.useClass ?? options.useExisting)!;
  const create = {
    provide: ID_GENERATOR_MODULE_OPTIONS,
    useFactory: (factory: IdGeneratorOptionsFactory): Promise<IdGeneratorModuleOptions> | IdGeneratorModuleOptions =>
      factory.createIdGeneratorOptions(),
    inject: [factoryClass],
  };
  return options.useClass ? [create, { provide: options.useClass, useClass: options.useClass }] : [create];
}
