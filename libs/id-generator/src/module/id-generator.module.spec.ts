import 'reflect-metadata';
import { describe, expect, it } from '@jest/globals';
import { Global, Injectable, Module, type BeforeApplicationShutdown, type OnModuleDestroy } from '@nestjs/common';
import { Test, type TestingModule } from '@nestjs/testing';
import { Aggregate } from '@ddd-kit/core/internal';
import { AggregateIdGeneratorFactory } from '../aggregate/aggregate-id-generator-factory.js';
import { AggregateIdGeneratorRegistrar } from '../aggregate/aggregate-id-generator-registrar.js';
import type { NamedAggregate } from '@ddd-kit/core/internal';
import { Order } from '../aggregate/order.decorator.js';
import { ClockSync } from '../clock/clock-sync.js';
import {
  AggregateNotDecoratedError,
  IdGeneratorOptionsError,
  MachineIdOverflowError,
  MachineIdReleasedError,
  NotInitializedAggregateIdGeneratorError,
  NotInitializedGlobalIdGeneratorError,
} from '../errors.js';
import { MachineIdHolder } from '../machine/machine-id-holder.js';
import { AsyncIdGeneratorAdapter } from '../generators/async-id-generator.js';
import { CosIdGenerator } from '../generators/cosid-generator.js';
import { SnowflakeId } from '../generators/snowflake-id.js';
import { GlobalIdGenerator } from '../global/global-id-generator.js';
import { generateGlobalId, generateId } from '../global/id-generator.registry.js';
import type { IdGenerator } from '../id-generator.interfaces.js';
import { getIdGeneratorContextToken } from './id-generator.utils.js';
import { IdGeneratorModule } from './id-generator.module.js';
import type { IdGeneratorContext, IdGeneratorModuleOptions } from './id-generator-options.interface.js';
import { getIdGeneratorToken } from './id-generator.utils.js';
import { InjectIdGenerator } from './inject-id-generator.decorator.js';

/** A generator that says who made it. */
class Labelled implements IdGenerator {
  private n = 0;
  constructor(readonly label: string) {}
  generate(): string {
    return `${this.label}-${++this.n}`;
  }
}

@Aggregate({ name: 'order', context: 'sales' })
class OrderAggregate {}

@Aggregate({ name: 'invoice', context: 'billing', idGenerator: 'snow' })
class InvoiceAggregate {}

@Aggregate({ name: 'ticket' })
class TicketAggregate {}

class SpecialTicket extends TicketAggregate {}

@Aggregate({ name: 'typo', idGenerator: 'snwo' })
class TypoAggregate {}

class NotAnAggregate {}

const asked: string[] = [];

@Injectable()
class LabelService {
  readonly generator = new Labelled('injected');
}

@Global()
@Module({ providers: [LabelService], exports: [LabelService] })
class LabelModule {}

@Order(10)
class LateFactory extends AggregateIdGeneratorFactory {
  create(named: NamedAggregate): IdGenerator | null {
    asked.push(`late:${named.aggregateName}`);
    return named.aggregateName === 'late-one' ? new Labelled('late') : null;
  }
}

@Order(-5)
class EarlyFactory extends AggregateIdGeneratorFactory {
  create(named: NamedAggregate): IdGenerator | null {
    asked.push(`early:${named.aggregateName}`);
    return named.aggregateName === 'early-one' || named.aggregateName === 'late-one' ? new Labelled('early') : null;
  }
}

@Injectable()
class InjectingFactory extends AggregateIdGeneratorFactory {
  constructor(private readonly labels: LabelService) {
    super();
  }
  create(named: NamedAggregate): IdGenerator | null {
    asked.push(`unordered:${named.aggregateName}`);
    return named.aggregateName === 'mid-one' ? this.labels.generator : null;
  }
}

@Injectable()
class Consumer {
  constructor(
    readonly global: GlobalIdGenerator,
    readonly registrar: AggregateIdGeneratorRegistrar,
    @InjectIdGenerator('snow') readonly snow: IdGenerator,
  ) {}
}

async function start(
  options: IdGeneratorModuleOptions,
  extra: { providers?: any[]; imports?: any[] } = {},
): Promise<TestingModule> {
  const moduleRef = await Test.createTestingModule({
    imports: [IdGeneratorModule.forRoot(options), ...(extra.imports ?? [])],
    providers: extra.providers ?? [],
  })
    .setLogger({ log: () => undefined, warn: () => undefined, error: () => undefined })
    .compile();
  await moduleRef.init();
  return moduleRef;
}

describe('IdGeneratorModule', () => {
  it('generateGlobalId() and generateId() throw NotInitialized… errors before any module initialised', () => {
    expect(() => generateGlobalId()).toThrow(NotInitializedGlobalIdGeneratorError);
    expect(() => generateId(OrderAggregate)).toThrow(NotInitializedAggregateIdGeneratorError);
  });

  it('GlobalIdGenerator is injectable: a clock-synced CosId on the configured machine ID; generateGlobalId() uses it until shutdown', async () => {
    const app = await start(
      { machine: 7, generators: { snow: (ctx) => new SnowflakeId({ machineId: ctx.machineId, machineBits: 10 }) } },
      { providers: [Consumer] },
    );
    const consumer = app.get(Consumer);
    expect(consumer.global).toBe(app.get(GlobalIdGenerator));
    expect(consumer.global.generator).toBeInstanceOf(ClockSync);
    const a = consumer.global.generate();
    const b = generateGlobalId();
    const c = await consumer.global.generateAsync();
    expect(CosIdGenerator.parse(a).machineId).toBe(7);
    expect(a < b && b < c).toBe(true);
    expect(consumer.snow).toBeInstanceOf(SnowflakeId);
    expect(app.get(getIdGeneratorToken('snow'))).toBe(consumer.snow);
    expect(app.get<IdGeneratorContext>(getIdGeneratorContextToken())).toMatchObject({
      machineId: 7,
      machineBits: 20,
      namespace: 'default',
    });
    await app.close();
    expect(() => generateGlobalId()).toThrow(NotInitializedGlobalIdGeneratorError);
  });

  it('the machine ID stays until onApplicationShutdown: IDs are issued in onModuleDestroy and beforeApplicationShutdown, which run before the HTTP server closes', async () => {
    const issued: Record<string, string> = {};
    @Injectable()
    class LateRequest implements OnModuleDestroy, BeforeApplicationShutdown {
      constructor(readonly global: GlobalIdGenerator) {}
      onModuleDestroy(): void {
        issued.destroy = this.global.generate();
      }
      beforeApplicationShutdown(): void {
        issued.beforeShutdown = this.global.generate();
      }
    }
    const app = await start({ machine: 3 }, { providers: [LateRequest] });
    const holder = app.get(MachineIdHolder);
    await app.close();
    expect(CosIdGenerator.parse(issued.destroy!).machineId).toBe(3);
    expect(CosIdGenerator.parse(issued.beforeShutdown!).machineId).toBe(3);
    expect(() => holder.lease.check()).toThrow(MachineIdReleasedError);
  });

  it('built-in aggregate rules: idGenerator name, else aggregate name, else a clock-synced CosId on the machine ID (one per aggregate, cached)', async () => {
    const app = await start({
      machine: 3,
      machineBits: 10,
      generators: {
        snow: (ctx) =>
          new SnowflakeId({
            machineId: ctx.machineId,
            machineBits: ctx.machineBits,
            lastTimestamp: ctx.lastTimestamp,
            lease: ctx.lease,
          }),
        ticket: new Labelled('ticket'),
      },
    });
    const registrar = app.get(AggregateIdGeneratorRegistrar);
    expect(registrar.get(InvoiceAggregate)).toBe(app.get(getIdGeneratorToken('snow'))); // by idGenerator
    expect(registrar.get(TicketAggregate).generate()).toBe('ticket-1'); // by aggregate name
    expect(generateId(new SpecialTicket())).toBe('ticket-2'); // subclass instance inherits the declaration
    const order = registrar.get(OrderAggregate); // fallback
    expect(order).toBeInstanceOf(ClockSync);
    expect(CosIdGenerator.parse(order.generate()).machineId).toBe(3);
    expect(registrar.get({ contextName: 'sales', aggregateName: 'order' })).toBe(order); // cached per named aggregate
    expect(registrar.get(new OrderAggregate())).toBe(order);
    expect(registrar.get({ contextName: 'other', aggregateName: 'order' })).not.toBe(order);
    expect(registrar.get(OrderAggregate)).not.toBe(app.get(GlobalIdGenerator).generator);
    // An idGenerator naming nothing configured falls back to the built-in CosId (with a warning).
    const typo = registrar.get(TypoAggregate);
    expect(typo).toBeInstanceOf(ClockSync);
    expect(typo).not.toBe(order);
    expect(CosIdGenerator.parse(typo.generate()).machineId).toBe(3);
    expect(() => registrar.get(NotAnAggregate)).toThrow(AggregateNotDecoratedError);
    await app.close();
  });

  it('factories run in @Order order (lowest first, then unordered, built-in last); the first non-null wins; classes get injection', async () => {
    const app = await start(
      { machine: 1, aggregateFactories: [LateFactory, InjectingFactory, EarlyFactory] },
      { imports: [LabelModule] },
    );
    const registrar = app.get(AggregateIdGeneratorRegistrar);
    expect(registrar.factories.map((f) => f.constructor.name)).toEqual([
      'EarlyFactory',
      'InjectingFactory',
      'LateFactory',
      'CosIdAggregateIdGeneratorFactory',
    ]);

    asked.length = 0;
    expect(registrar.get({ contextName: 'x', aggregateName: 'late-one' }).generate()).toBe('early-1'); // Early answers before Late
    expect(asked).toEqual(['early:late-one']);

    asked.length = 0;
    // A plain IdGenerator comes wrapped, so that generateAsync() is always there.
    const mid = registrar.get({ contextName: 'x', aggregateName: 'mid-one' });
    expect(mid).toBeInstanceOf(AsyncIdGeneratorAdapter);
    expect((mid as AsyncIdGeneratorAdapter).generator).toBe(app.get(LabelService).generator);
    expect(await mid.generateAsync()).toBe('injected-1');
    expect(asked).toEqual(['early:mid-one', 'unordered:mid-one']);

    asked.length = 0;
    const fallback = registrar.get({ contextName: 'x', aggregateName: 'nobody' });
    expect(asked).toEqual(['early:nobody', 'unordered:nobody', 'late:nobody']);
    expect(fallback).toBeInstanceOf(ClockSync);

    asked.length = 0;
    registrar.get({ contextName: 'x', aggregateName: 'nobody' });
    registrar.get({ contextName: 'x', aggregateName: 'mid-one' });
    expect(asked).toEqual([]); // cached: the chain is not asked again
    await app.close();
  });

  it('forRootAsync: options from an injected factory, named generators declared up front', async () => {
    @Injectable()
    class Config {
      readonly machine = 12;
    }
    @Module({ providers: [Config], exports: [Config] })
    class ConfigModule {}

    const moduleRef = await Test.createTestingModule({
      imports: [
        IdGeneratorModule.forRootAsync({
          imports: [ConfigModule],
          inject: [Config],
          generatorNames: ['snow'],
          useFactory: (config: Config) => ({
            machine: config.machine,
            machineBits: 10,
            generators: { snow: (ctx) => new SnowflakeId({ machineId: ctx.machineId }) },
          }),
        }),
      ],
      providers: [Consumer],
    })
      .setLogger({ log: () => undefined, warn: () => undefined, error: () => undefined })
      .compile();
    await moduleRef.init();
    const consumer = moduleRef.get(Consumer);
    expect((consumer.snow as SnowflakeId).parse(consumer.snow.generate()).machineId).toBe(12);
    expect(CosIdGenerator.parse(generateGlobalId()).machineId).toBe(12);
    await moduleRef.close();
  });

  it('forRootAsync with useClass', async () => {
    class Options {
      createIdGeneratorOptions(): IdGeneratorModuleOptions {
        return { machine: 4, globalGenerator: (ctx) => new SnowflakeId({ machineId: ctx.machineId }) };
      }
    }
    const moduleRef = await Test.createTestingModule({
      imports: [IdGeneratorModule.forRootAsync({ useClass: Options })],
    })
      .setLogger({ log: () => undefined, warn: () => undefined, error: () => undefined })
      .compile();
    await moduleRef.init();
    const global = moduleRef.get(GlobalIdGenerator);
    expect(global.generator).toBeInstanceOf(SnowflakeId);
    expect((global.generator as SnowflakeId).parse(global.generate()).machineId).toBe(4);
    await moduleRef.close();
  });

  it('invalid options fail at bootstrap with IdGeneratorOptionsError saying what to change', async () => {
    await expect(start({ machine: -1 })).rejects.toThrow(IdGeneratorOptionsError);
    // A fixed ID past the machine bits: the overflow error every distributor gives.
    await expect(start({ machine: 2 ** 20 })).rejects.toThrow(MachineIdOverflowError);
    await expect(start({ machineBits: 21 })).rejects.toThrow(/machineBits/);
    await expect(start({ globalGenerator: 'missing' })).rejects.toThrow(/globalGenerator names "missing"/);
    await expect(start({ generators: { bad: SnowflakeId as never } })).rejects.toThrow(/is a class/);
    await expect(start({ machine: 'x' as never })).rejects.toThrow(/machine must be/);
    await expect(start({ aggregateFactories: [{} as never] })).rejects.toThrow(/aggregateFactories\[0\]/);
    expect(() => IdGeneratorModule.forRootAsync({} as never)).toThrow(IdGeneratorOptionsError);
  });
});
