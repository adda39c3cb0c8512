import type { InjectionToken, ModuleMetadata, OptionalFactoryDependency, Type } from '@nestjs/common';
import type { AggregateIdGeneratorFactory } from '../aggregate/aggregate-id-generator-factory.js';
import type { ClockSyncOptions } from '../clock/clock-sync.js';
import type { ClockLike, IdGenerator } from '../id-generator.interfaces.js';
import type { MachineIdDistributor } from '../machine/machine-id-distributor.js';
import type { MachineIdLease } from '../machine/machine-id-lease.js';
import type { RedisConnectionOptions } from '@ddd-kit/core/redis';
import type { RedisMachineIdDistributorOptions } from '../machine/redis/redis-machine-id-distributor.js';

/** Where the module connects for a leased machine ID, with the distributor's settings. */
export interface RedisMachineIdStoreOptions extends RedisConnectionOptions, RedisMachineIdDistributorOptions {}

/**
 * A machine-ID store the module connects to itself: it opens the client (failing the start-up
 * with MachineIdStoreError when the store cannot be reached), and on shutdown gives the machine
 * ID back first and closes the client after, so the release cannot find the connection closed.
 */
export interface MachineIdStoreOptions {
  redis: RedisMachineIdStoreOptions;
}

/**
 * What a generator factory receives: the machine ID this instance holds. A function definition is
 * called again with a new context when a lost machine ID is replaced; the injected
 * The injected context (`@InjectIdGeneratorContext()`) is a live view of the current one.
 */
export interface IdGeneratorContext {
  readonly machineId: number;
  /** IDs under this machine ID must be later than this millisecond (pass it to generators). */
  readonly lastTimestamp: number;
  readonly machineBits: number;
  readonly namespace: string;
  readonly instanceId: string;
  /** Pass to time-based generators so that they stop when the machine ID is lost or released. */
  readonly lease: MachineIdLease;
}

/**
 * A generator, or a function of the context that makes one (may be async, e.g. `SegmentId.ready()`).
 * Give time-based generators as functions: only those can move to a replacement machine ID.
 */
export type IdGeneratorDefinition = IdGenerator | ((context: IdGeneratorContext) => IdGenerator | Promise<IdGenerator>);

export interface IdGeneratorModuleOptions {
  /**
   * A fixed machine ID, or where to get one; default machine ID 0 (one process only):
   * `{ redis: { url } }` (a client the module owns and closes), or a MachineIdDistributor
   * (on a client you own: close it in `onApplicationShutdown` of a global module imported before
   * this one, so that it closes after the release, which runs in that phase too).
   */
  machine?: number | MachineIdDistributor | MachineIdStoreOptions;
  /** Machine IDs are unique within a namespace; default 'default'. */
  namespace?: string;
  /** This process for the distributor, unique among live instances; default host name, PID and a random part. */
  instanceId?: string;
  /** Bits of the distributed machine ID, 1 to 20; default 20 (CosIdGenerator's). */
  machineBits?: number;
  /** Named generators: injectable with @InjectIdGenerator(name), and picked for aggregates by name. */
  generators?: Record<string, IdGeneratorDefinition>;
  /** The global generator: a name in `generators`, or a definition; default a clock-synced CosIdGenerator. */
  globalGenerator?: string | IdGeneratorDefinition;
  /** Links of the aggregate generator chain, ordered by @Order; classes are instantiated by Nest. */
  aggregateFactories?: Array<Type<AggregateIdGeneratorFactory> | AggregateIdGeneratorFactory>;
  /** Thresholds of the ClockSync around the built-in CosIdGenerators. */
  clockSync?: ClockSyncOptions;
  /** Clock of the built-in generators and the lease's wall clock; default Date.now (inject one in tests). */
  clock?: ClockLike;
}

export interface IdGeneratorModuleForRootOptions extends IdGeneratorModuleOptions {
  /** Register the providers globally; default true. */
  global?: boolean;
}

export interface IdGeneratorOptionsFactory {
  createIdGeneratorOptions(): IdGeneratorModuleOptions | Promise<IdGeneratorModuleOptions>;
}

export interface IdGeneratorModuleAsyncOptions extends Pick<ModuleMetadata, 'imports'> {
  /** Register the providers globally; default true. */
  global?: boolean;
  /**
   * Names of `generators` to make injectable with @InjectIdGenerator: tokens must be known
   * before the factory runs. Every name listed must be configured.
   */
  generatorNames?: string[];
  useFactory?: (...args: any[]) => IdGeneratorModuleOptions | Promise<IdGeneratorModuleOptions>;
  inject?: Array<InjectionToken | OptionalFactoryDependency>;
  useClass?: Type<IdGeneratorOptionsFactory>;
  useExisting?: Type<IdGeneratorOptionsFactory>;
}
