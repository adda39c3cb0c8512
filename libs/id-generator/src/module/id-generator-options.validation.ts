import { isMachineIdDistributor, type MachineIdDistributor } from '../machine/machine-id-distributor.js';
import { ManualMachineIdDistributor } from '../machine/manual-machine-id-distributor.js';
import { nextDefaultInstanceId } from '../machine/instance-id.utils.js';
import { IdGeneratorOptionsError } from '../errors.js';
import { connectionProblem } from '@ddd-kit/core/redis';
import { DEFAULT_MACHINE_BITS, DEFAULT_NAMESPACE } from './id-generator.constants.js';
import type {
  IdGeneratorDefinition,
  IdGeneratorModuleOptions,
  RedisMachineIdStoreOptions,
} from './id-generator-options.interface.js';

/** Options with the defaults applied and every field checked. */
export interface ResolvedIdGeneratorOptions extends IdGeneratorModuleOptions {
  /** Absent when `machine` is `{ redis }`: the distributor is built on the module's client. */
  distributor?: MachineIdDistributor;
  /** `machine: { redis }`: the module connects (after every option was checked). */
  ownedRedis?: RedisMachineIdStoreOptions;
  namespace: string;
  instanceId: string;
  machineBits: number;
  generators: Record<string, IdGeneratorDefinition>;
}

const HOW =
  'see IdGeneratorModule.forRoot({ machine, namespace, instanceId, machineBits, generators, globalGenerator, aggregateFactories })';

function fail(message: string): never {
  throw new IdGeneratorOptionsError(`IdGeneratorModule: ${message} (${HOW})`);
}

function assertDefinition(where: string, value: unknown): void {
  if (typeof value === 'function') {
    if (typeof (value as { prototype?: { generate?: unknown } }).prototype?.generate === 'function') {
      fail(
        `${where} is a class; pass an instance (new X(...)) or a function (ctx) => new X({ machineId: ctx.machineId, ... })`,
      );
    }
    return;
  }
  if (!value || typeof (value as { generate?: unknown }).generate !== 'function')
    fail(`${where} must be an IdGenerator or a function of the context returning one`);
}

export function resolveIdGeneratorOptions(
  options: IdGeneratorModuleOptions | undefined | null,
): ResolvedIdGeneratorOptions {
  if (options !== undefined && options !== null && typeof options !== 'object') fail('options must be an object');
  const o = options ?? {};
  const machineBits = o.machineBits ?? DEFAULT_MACHINE_BITS;
  if (!Number.isInteger(machineBits) || machineBits < 1 || machineBits > DEFAULT_MACHINE_BITS) {
    fail(
      `machineBits must be an integer in [1, ${DEFAULT_MACHINE_BITS}] (the built-in CosIdGenerator holds ${DEFAULT_MACHINE_BITS}), got ${String(machineBits)}`,
    );
  }
  let distributor: MachineIdDistributor | undefined;
  let ownedRedis: RedisMachineIdStoreOptions | undefined;
  if (o.machine === undefined) distributor = new ManualMachineIdDistributor(0);
  else if (typeof o.machine === 'number') {
    // One that does not fit the machine bits is the distributor's MachineIdOverflowError, as
    // with every other source of a fixed ID.
    if (!Number.isInteger(o.machine) || o.machine < 0) fail(`machine must be a non-negative integer, got ${o.machine}`);
    distributor = new ManualMachineIdDistributor(o.machine);
  } else if (isMachineIdDistributor(o.machine)) distributor = o.machine;
  else if (o.machine !== null && typeof o.machine === 'object' && 'redis' in o.machine) {
    const problem = connectionProblem(o.machine.redis);
    if (problem !== undefined) fail(`machine.redis ${problem}`);
    ownedRedis = o.machine.redis;
  } else
    fail(
      'machine must be a number, { redis: { url } } or a MachineIdDistributor (ManualMachineIdDistributor, StatefulSetMachineIdDistributor, RedisMachineIdDistributor)',
    );
  const namespace = o.namespace ?? DEFAULT_NAMESPACE;
  if (typeof namespace !== 'string' || namespace.length === 0 || namespace.length > 256)
    fail('namespace must be a non-empty string of at most 256 characters');
  const instanceId = o.instanceId ?? nextDefaultInstanceId();
  if (typeof instanceId !== 'string' || instanceId.length === 0 || instanceId.length > 512)
    fail('instanceId must be a non-empty string of at most 512 characters');
  const generators = o.generators ?? {};
  if (typeof generators !== 'object' || generators === null || Array.isArray(generators))
    fail('generators must be an object of name → generator');
  for (const [name, definition] of Object.entries(generators)) {
    if (name.length === 0) fail('generator names must be non-empty');
    assertDefinition(`generators[${JSON.stringify(name)}]`, definition);
  }
  if (o.globalGenerator !== undefined) {
    if (typeof o.globalGenerator === 'string') {
      if (!Object.prototype.hasOwnProperty.call(generators, o.globalGenerator)) {
        fail(
          `globalGenerator names "${o.globalGenerator}", which is not in generators (${Object.keys(generators).join(', ') || 'none'})`,
        );
      }
    } else assertDefinition('globalGenerator', o.globalGenerator);
  }
  if (o.aggregateFactories !== undefined) {
    if (!Array.isArray(o.aggregateFactories)) fail('aggregateFactories must be an array');
    o.aggregateFactories.forEach((factory, i) => {
      const isClass = typeof factory === 'function' && typeof factory.prototype?.create === 'function';
      const isInstance =
        !!factory && typeof factory === 'object' && typeof (factory as { create?: unknown }).create === 'function';
      if (!isClass && !isInstance)
        fail(
          `aggregateFactories[${i}] must be an AggregateIdGeneratorFactory class or instance (with create(namedAggregate))`,
        );
    });
  }
  return { ...o, distributor, ownedRedis, namespace, instanceId, machineBits, generators };
}
