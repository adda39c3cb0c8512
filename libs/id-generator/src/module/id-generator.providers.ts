import { Logger, type Provider, type Type } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { AggregateIdGeneratorFactory } from '../aggregate/aggregate-id-generator-factory.js';
import { AggregateIdGeneratorRegistrar } from '../aggregate/aggregate-id-generator-registrar.js';
import { CosIdAggregateIdGeneratorFactory } from '../aggregate/cosid-aggregate-id-generator-factory.js';
import { ClockSync } from '../clock/clock-sync.js';
import { toClock } from '../clock/clock.utils.js';
import { IdGeneratorOptionsError } from '../errors/id-generator-options.error.js';
import { UnknownIdGeneratorError } from '../errors/unknown-id-generator.error.js';
import { CosIdGenerator } from '../generators/cosid-generator.js';
import { GlobalIdGenerator } from '../global/global-id-generator.js';
import type { IdGenerator } from '../id-generator.interfaces.js';
import { MachineIdHolder } from '../machine/machine-id-holder.js';
import { ID_GENERATOR_CONTEXT, ID_GENERATOR_MODULE_OPTIONS, ID_GENERATORS } from './id-generator.constants.js';
import type { IdGeneratorContext, IdGeneratorDefinition, IdGeneratorModuleOptions } from './id-generator-options.interface.js';
import { resolveIdGeneratorOptions, type ResolvedIdGeneratorOptions } from './id-generator-options.validation.js';
import { getIdGeneratorToken } from './id-generator.utils.js';

/** Internal: the options with defaults applied, checked at bootstrap. */
export const RESOLVED_OPTIONS = 'DDD_KIT_ID_GENERATOR_RESOLVED_OPTIONS';

const logger = new Logger('IdGeneratorModule');

function contextOf(holder: MachineIdHolder): IdGeneratorContext {
  return Object.freeze({
    machineId: holder.machineId,
    lastTimestamp: holder.lastTimestamp,
    machineBits: holder.machineBits,
    namespace: holder.namespace,
    instanceId: holder.instanceId,
    lease: holder.lease,
  });
}

/** A clock-synced CosIdGenerator on the held machine ID, reported by the heartbeat. */
function builtInCosId(options: ResolvedIdGeneratorOptions, holder: MachineIdHolder): ClockSync<CosIdGenerator> {
  const generator = new ClockSync(
    new CosIdGenerator({ machineId: holder.machineId, lastTimestamp: holder.lastTimestamp, lease: holder.lease, clock: options.clock }),
    options.clockSync,
  );
  holder.track(generator);
  return generator;
}

async function build(where: string, definition: IdGeneratorDefinition, context: IdGeneratorContext, holder: MachineIdHolder): Promise<IdGenerator> {
  const generator = typeof definition === 'function' ? await definition(context) : definition;
  if (!generator || typeof generator.generate !== 'function') throw new IdGeneratorOptionsError(`IdGeneratorModule: ${where} did not produce an IdGenerator`);
  // Generators on the held machine ID report how far their timestamps went.
  const timed = generator as IdGenerator & Partial<{ machineId: number; lastTimestamp: number }>;
  if (timed.machineId === context.machineId && typeof timed.lastTimestamp === 'number') holder.track(timed as { lastTimestamp: number });
  return generator;
}

/**
 * Runs a bootstrap step after the machine ID was taken; if it fails, gives the ID back (Nest
 * runs no shutdown hooks for an application that failed to start).
 */
async function orRelease<T>(holder: MachineIdHolder, step: () => T | Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (error) {
    await holder.release().catch(() => undefined);
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
    {
      provide: MachineIdHolder,
      useFactory: async (options: ResolvedIdGeneratorOptions) => {
        const holder = await MachineIdHolder.acquire({
          distributor: options.distributor,
          namespace: options.namespace,
          machineBits: options.machineBits,
          instanceId: options.instanceId,
          clock: options.clock === undefined ? undefined : toClock(options.clock),
        });
        logger.log(`Machine ID ${holder.machineId} of namespace "${holder.namespace}" held by instance "${holder.instanceId}"`);
        return holder;
      },
      inject: [RESOLVED_OPTIONS],
    },
    { provide: ID_GENERATOR_CONTEXT, useFactory: contextOf, inject: [MachineIdHolder] },
    {
      provide: ID_GENERATORS,
      useFactory: (options: ResolvedIdGeneratorOptions, context: IdGeneratorContext, holder: MachineIdHolder) =>
        orRelease(holder, async () => {
          const generators = new Map<string, IdGenerator>();
          for (const [name, definition] of Object.entries(options.generators)) {
            generators.set(name, await build(`generators[${JSON.stringify(name)}]`, definition, context, holder));
          }
          for (const name of generatorNames) {
            if (!generators.has(name)) throw new UnknownIdGeneratorError(name, [...generators.keys()], 'IdGeneratorModule.forRootAsync({ generatorNames })');
          }
          return generators;
        }),
      inject: [RESOLVED_OPTIONS, ID_GENERATOR_CONTEXT, MachineIdHolder],
    },
    {
      provide: GlobalIdGenerator,
      useFactory: (options: ResolvedIdGeneratorOptions, generators: Map<string, IdGenerator>, context: IdGeneratorContext, holder: MachineIdHolder) =>
        orRelease(holder, async () => {
          const chosen = options.globalGenerator;
          if (chosen === undefined) return new GlobalIdGenerator(builtInCosId(options, holder));
          if (typeof chosen === 'string') return new GlobalIdGenerator(generators.get(chosen)!);
          return new GlobalIdGenerator(await build('globalGenerator', chosen, context, holder));
        }),
      inject: [RESOLVED_OPTIONS, ID_GENERATORS, ID_GENERATOR_CONTEXT, MachineIdHolder],
    },
    {
      provide: AggregateIdGeneratorRegistrar,
      useFactory: (moduleRef: ModuleRef, options: ResolvedIdGeneratorOptions, generators: Map<string, IdGenerator>, holder: MachineIdHolder) =>
        orRelease(holder, async () => {
          const factories = await Promise.all(
            (options.aggregateFactories ?? []).map((factory) =>
              typeof factory === 'function' ? moduleRef.create(factory as Type<AggregateIdGeneratorFactory>) : Promise.resolve(factory),
            ),
          );
          const builtIn = new CosIdAggregateIdGeneratorFactory(generators, () => builtInCosId(options, holder));
          return new AggregateIdGeneratorRegistrar(factories, builtIn);
        }),
      inject: [ModuleRef, RESOLVED_OPTIONS, ID_GENERATORS, MachineIdHolder],
    },
    ...generatorNames.map((name) => ({
      provide: getIdGeneratorToken(name),
      useFactory: (generators: Map<string, IdGenerator>) => generators.get(name),
      inject: [ID_GENERATORS],
    })),
  ];
}

export function exportedTokens(generatorNames: string[]): Array<string | Function> {
  return [
    ID_GENERATOR_MODULE_OPTIONS,
    ID_GENERATOR_CONTEXT,
    MachineIdHolder,
    GlobalIdGenerator,
    AggregateIdGeneratorRegistrar,
    ...generatorNames.map(getIdGeneratorToken),
  ];
}
