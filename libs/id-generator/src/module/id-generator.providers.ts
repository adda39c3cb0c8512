import { Logger, type Provider, type Type } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import type { AggregateIdGeneratorFactory } from '../aggregate/aggregate-id-generator-factory.js';
import { AggregateIdGeneratorRegistrar } from '../aggregate/aggregate-id-generator-registrar.js';
import { CosIdAggregateIdGeneratorFactory } from '../aggregate/cosid-aggregate-id-generator-factory.js';
import { toClock } from '../clock/clock.utils.js';
import { IdGeneratorError, IdGeneratorOptionsError, MachineIdStoreError, UnknownIdGeneratorError } from '../errors.js';
import { CosIdGenerator } from '../generators/cosid-generator.js';
import { GlobalIdGenerator } from '../global/global-id-generator.js';
import type { IdGenerator } from '../id-generator.interfaces.js';
import type { MachineIdDistributor } from '../machine/machine-id-distributor.js';
import { MachineIdHolder, type HeldMachineId } from '../machine/machine-id-holder.js';
import { closeRedis, describeRedis, openRedis } from '@ddd-kit/core/redis';
import { RedisMachineIdDistributor } from '../machine/redis/redis-machine-id-distributor.js';
import { followHolder, HeldClockSync, isOnMachineId } from './held-generators.js';
import {
  ID_GENERATOR_CONTEXT,
  ID_GENERATOR_MACHINE_ID_STORE as MACHINE_ID_STORE,
  ID_GENERATOR_MODULE_OPTIONS,
  ID_GENERATOR_RESOLVED_OPTIONS as RESOLVED_OPTIONS,
  ID_GENERATORS,
} from './id-generator.constants.js';
import type {
  IdGeneratorContext,
  IdGeneratorDefinition,
  IdGeneratorModuleOptions,
} from './id-generator-options.interface.js';
import { resolveIdGeneratorOptions, type ResolvedIdGeneratorOptions } from './id-generator-options.validation.js';
import { getIdGeneratorToken } from './id-generator.utils.js';

const logger = new Logger('IdGeneratorModule');

/** A store client the module owns: closed only after the machine ID was given back. */
export interface OwnedMachineIdStore {
  distributor: MachineIdDistributor;
  close(): Promise<void>;
}

async function openMachineIdStore(options: ResolvedIdGeneratorOptions): Promise<OwnedMachineIdStore | null> {
  if (options.ownedRedis === undefined) return null;
  const { url, options: clientOptions, ...distributorOptions } = options.ownedRedis;
  const where = describeRedis({ url, options: clientOptions });
  const client = await openRedis(
    { url, options: clientOptions },
    logger,
    (cause) =>
      new MachineIdStoreError(
        `IdGeneratorModule: cannot connect to Redis at ${where} to lease a machine ID (${cause.message}). ` +
          'Start Redis, or correct machine.redis.url; the application did not start.',
        { cause },
      ),
  );
  try {
    return { distributor: new RedisMachineIdDistributor(client, distributorOptions), close: () => closeRedis(client) };
  } catch (error) {
    await closeRedis(client);
    throw error;
  }
}

/** Acquires the machine ID; a driver's failure becomes one error that names the step and what to check. */
async function acquireHolder(
  options: ResolvedIdGeneratorOptions,
  store: OwnedMachineIdStore | null,
): Promise<MachineIdHolder> {
  const distributor = store?.distributor ?? options.distributor!;
  try {
    return await MachineIdHolder.acquire({
      distributor,
      namespace: options.namespace,
      machineBits: options.machineBits,
      instanceId: options.instanceId,
      clock: options.clock === undefined ? undefined : toClock(options.clock),
      logger,
    });
  } catch (error) {
    await store?.close();
    if (error instanceof IdGeneratorError) throw error;
    const cause = error instanceof Error ? error.message : String(error);
    throw new MachineIdStoreError(
      `IdGeneratorModule: acquiring a machine ID of namespace "${options.namespace}" from ${distributor.constructor.name} failed (${cause}). ` +
        'Check that its store is reachable from this process (the client you gave it, or machine: { redis: { url } }); the application did not start.',
      { cause: error },
    );
  }
}

/** A live view of the holder: the current machine ID, its floor and lease (they change when a lost ID is replaced). */
function contextOf(holder: MachineIdHolder): IdGeneratorContext {
  return Object.freeze({
    get machineId() {
      return holder.machineId;
    },
    get lastTimestamp() {
      return holder.lastTimestamp;
    },
    get lease() {
      return holder.lease;
    },
    machineBits: holder.machineBits,
    namespace: holder.namespace,
    instanceId: holder.instanceId,
  });
}

/** What a definition function receives for one machine ID (a snapshot: rebuilt for a replacement). */
function contextFor(holder: MachineIdHolder, held: HeldMachineId): IdGeneratorContext {
  return Object.freeze({
    machineId: held.machineId,
    lastTimestamp: held.lastTimestamp,
    lease: held.lease,
    machineBits: holder.machineBits,
    namespace: holder.namespace,
    instanceId: holder.instanceId,
  });
}

/** A clock-synced CosIdGenerator on the held machine ID, reported by the heartbeat, moving to a replacement ID. */
function builtInCosId(options: ResolvedIdGeneratorOptions, holder: MachineIdHolder): HeldClockSync<CosIdGenerator> {
  return new HeldClockSync(
    holder,
    (held) =>
      new CosIdGenerator({
        machineId: held.machineId,
        lastTimestamp: held.lastTimestamp,
        lease: held.lease,
        clock: options.clock,
      }),
    options.clockSync,
  );
}

async function build(where: string, definition: IdGeneratorDefinition, holder: MachineIdHolder): Promise<IdGenerator> {
  const make = async (held: HeldMachineId): Promise<IdGenerator> => {
    const generator = typeof definition === 'function' ? await definition(contextFor(holder, held)) : definition;
    if (!generator || typeof generator.generate !== 'function')
      throw new IdGeneratorOptionsError(`IdGeneratorModule: ${where} did not produce an IdGenerator`);
    return generator;
  };
  const generator = await make(holder.current);
  if (!isOnMachineId(generator, holder.machineId)) return generator;
  // A time-based generator on the held machine ID: its timestamps are reported by the heartbeat,
  // and one made by a function is remade on a machine ID acquired in place of a lost one.
  if (typeof definition !== 'function') {
    holder.track(generator);
    return generator;
  }
  return followHolder(generator, holder, async (held) => {
    const next = await make(held);
    if (!isOnMachineId(next, held.machineId))
      throw new IdGeneratorOptionsError(
        `IdGeneratorModule: ${where} did not use machine ID ${held.machineId} of its context`,
      );
    return next;
  });
}

/**
 * Runs a bootstrap step after the machine ID was taken; if it fails, gives the ID back (Nest
 * runs no shutdown hooks for an application that failed to start).
 */
async function orRelease<T>(
  holder: MachineIdHolder,
  store: OwnedMachineIdStore | null,
  step: () => T | Promise<T>,
): Promise<T> {
  try {
    return await step();
  } catch (error) {
    await holder.release().catch(() => undefined);
    await store?.close();
    throw error;
  }
}

/** The providers behind every token the module exports, given a provider of the raw options. */
export function createIdGeneratorProviders(generatorNames: string[]): Provider[] {
  return [
    {
      provide: RESOLVED_OPTIONS,
      useFactory: (options: IdGeneratorModuleOptions) => resolveIdGeneratorOptions(options),
      inject: [ID_GENERATOR_MODULE_OPTIONS],
    },
    { provide: MACHINE_ID_STORE, useFactory: openMachineIdStore, inject: [RESOLVED_OPTIONS] },
    {
      provide: MachineIdHolder,
      useFactory: async (options: ResolvedIdGeneratorOptions, store: OwnedMachineIdStore | null) => {
        const holder = await acquireHolder(options, store);
        logger.log(
          `Machine ID ${holder.machineId} of namespace "${holder.namespace}" held by instance "${holder.instanceId}"`,
        );
        return holder;
      },
      inject: [RESOLVED_OPTIONS, MACHINE_ID_STORE],
    },
    { provide: ID_GENERATOR_CONTEXT, useFactory: contextOf, inject: [MachineIdHolder] },
    {
      provide: ID_GENERATORS,
      useFactory: (options: ResolvedIdGeneratorOptions, holder: MachineIdHolder, store: OwnedMachineIdStore | null) =>
        orRelease(holder, store, async () => {
          const generators = new Map<string, IdGenerator>();
          for (const [name, definition] of Object.entries(options.generators)) {
            generators.set(name, await build(`generators[${JSON.stringify(name)}]`, definition, holder));
          }
          for (const name of generatorNames) {
            if (!generators.has(name))
              throw new UnknownIdGeneratorError(
                name,
                [...generators.keys()],
                'IdGeneratorModule.forRootAsync({ generatorNames })',
              );
          }
          return generators;
        }),
      inject: [RESOLVED_OPTIONS, MachineIdHolder, MACHINE_ID_STORE],
    },
    {
      provide: GlobalIdGenerator,
      useFactory: (
        options: ResolvedIdGeneratorOptions,
        generators: Map<string, IdGenerator>,
        holder: MachineIdHolder,
        store: OwnedMachineIdStore | null,
      ) =>
        orRelease(holder, store, async () => {
          const chosen = options.globalGenerator;
          if (chosen === undefined) return new GlobalIdGenerator(builtInCosId(options, holder));
          if (typeof chosen === 'string') return new GlobalIdGenerator(generators.get(chosen)!);
          return new GlobalIdGenerator(await build('globalGenerator', chosen, holder));
        }),
      inject: [RESOLVED_OPTIONS, ID_GENERATORS, MachineIdHolder, MACHINE_ID_STORE],
    },
    {
      provide: AggregateIdGeneratorRegistrar,
      useFactory: (
        moduleRef: ModuleRef,
        options: ResolvedIdGeneratorOptions,
        generators: Map<string, IdGenerator>,
        holder: MachineIdHolder,
        store: OwnedMachineIdStore | null,
      ) =>
        orRelease(holder, store, async () => {
          const factories = await Promise.all(
            (options.aggregateFactories ?? []).map((factory) =>
              typeof factory === 'function'
                ? moduleRef.create(factory as Type<AggregateIdGeneratorFactory>)
                : Promise.resolve(factory),
            ),
          );
          const builtIn = new CosIdAggregateIdGeneratorFactory(generators, () => builtInCosId(options, holder));
          return new AggregateIdGeneratorRegistrar(factories, builtIn);
        }),
      inject: [ModuleRef, RESOLVED_OPTIONS, ID_GENERATORS, MachineIdHolder, MACHINE_ID_STORE],
    },
    ...generatorNames.map((name) => ({
      provide: getIdGeneratorToken(name),
      useFactory: (generators: Map<string, IdGenerator>) => generators.get(name),
      inject: [ID_GENERATORS],
    })),
  ];
}

export function exportedTokens(generatorNames: string[]): Array<string | symbol | Function> {
  return [
    ID_GENERATOR_MODULE_OPTIONS,
    ID_GENERATOR_CONTEXT,
    MachineIdHolder,
    GlobalIdGenerator,
    AggregateIdGeneratorRegistrar,
    ...generatorNames.map(getIdGeneratorToken),
  ];
}
