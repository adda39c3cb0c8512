import { Module, type DynamicModule } from '@nestjs/common';
import { IdGeneratorCoreModule } from './id-generator-core.module.js';
import type {
  IdGeneratorModuleAsyncOptions,
  IdGeneratorModuleForRootOptions,
} from './id-generator-options.interface.js';

/**
 * Distributed ID generation for a Nest application: a machine ID for this instance (fixed,
 * StatefulSet ordinal or Redis-distributed), the global (message) ID generator, named
 * generators and per-aggregate generators. Global by default.
 *
 * ```ts
 * IdGeneratorModule.forRoot({
 *   machine: new RedisMachineIdDistributor(redis),
 *   namespace: 'orders-service',
 *   machineBits: 10,
 *   generators: {
 *     invoice: (ctx) => new SnowflakeId({ machineId: ctx.machineId, machineBits: ctx.machineBits, lastTimestamp: ctx.lastTimestamp, lease: ctx.lease }),
 *   },
 * })
 * ```
 */
@Module({})
export class IdGeneratorModule {
  static forRoot(options: IdGeneratorModuleForRootOptions = {}): DynamicModule {
    return {
      module: IdGeneratorModule,
      imports: [IdGeneratorCoreModule.forRoot(options)],
      exports: [IdGeneratorCoreModule],
    };
  }

  static forRootAsync(options: IdGeneratorModuleAsyncOptions): DynamicModule {
    return {
      module: IdGeneratorModule,
      imports: [IdGeneratorCoreModule.forRootAsync(options)],
      exports: [IdGeneratorCoreModule],
    };
  }
}
