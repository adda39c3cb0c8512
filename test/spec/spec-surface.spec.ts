// The public contract of SPEC.md, used exactly as written there: names, call shapes and
// meanings. A rename or a changed signature in any library fails here first.
import 'reflect-metadata';
import { afterAll, describe, expect, it } from '@jest/globals';
import { Inject, Injectable, Module } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import {
  InjectPrepareKey,
  MemoryPrepareKeyFactory,
  PreparableKey,
  PrepareKey,
  PrepareKeyFactory,
  PrepareKeyModule,
  PrepareKeyStateError,
  PreparedValue,
  TTL_FOREVER,
  getPrepareKeyToken,
  reconcileReservations,
  toForever,
  toTtlAt,
} from '@ddd-kit/prepare-key';
import {
  Aggregate,
  AggregateIdGeneratorFactory,
  AggregateIdGeneratorRegistrar,
  ClockBackwardsError,
  ClockSync,
  CosIdGenerator,
  GlobalIdGenerator,
  IdGeneratorModule,
  ManualMachineIdDistributor,
  NanoIdGenerator,
  NotInitializedGlobalIdGeneratorError,
  Order,
  SafeJsSnowflakeId,
  SnowflakeId,
  generateGlobalId,
  generateId,
  type IdGenerator,
  type NamedAggregate,
} from '@ddd-kit/id-generator';
import {
  AggregateRoot,
  InMemoryRepository,
  InjectRepository,
  OnDataSync,
  OptimisticLockError,
  RepositoryModule,
  retryOnConflict,
  type DataSyncEvent,
  type IRepository,
} from '@ddd-kit/repository';

interface UsernameIndex {
  userId: string;
}

@PreparableKey('spec-username')
abstract class SpecUsernamePrepareKey extends PrepareKey<UsernameIndex> {
  async holder(key: string) {
    return (await this.get(key))?.userId;
  }
}

@PreparableKey()
abstract class SpecSkuPrepareKey extends PrepareKey<string> {}

describe('SPEC §1 prepare-key', () => {
  it('values: TTL_FOREVER is 6666-06-06 UTC; toForever / toTtlAt / PreparedValue', () => {
    expect(TTL_FOREVER).toBe(Date.UTC(6666, 5, 6));
    expect(toForever('v')).toBeInstanceOf(PreparedValue);
    expect(toForever('v').isForever).toBe(true);
    const t = toTtlAt('v', 1000);
    expect([t.value, t.ttlAt, t.isForever, t.isExpired(999), t.isExpired(1000)]).toEqual([
      'v',
      1000,
      false,
      false,
      true,
    ]);
  });

  it('declared keys are injectable by class, by key name and by simple class name; proxies are instances', async () => {
    @Injectable()
    class Consumer {
      constructor(
        readonly byClass: SpecUsernamePrepareKey,
        @InjectPrepareKey('spec-username') readonly byName: PrepareKey<UsernameIndex>,
        @Inject('SpecUsernamePrepareKey') readonly bySimpleName: SpecUsernamePrepareKey,
        @Inject(getPrepareKeyToken('SpecSkuPrepareKey')) readonly sku: SpecSkuPrepareKey,
      ) {}
    }
    @Module({ imports: [PrepareKeyModule.forRoot({ factory: new MemoryPrepareKeyFactory() })], providers: [Consumer] })
    class AppModule {}
    const app = await Test.createTestingModule({ imports: [AppModule] }).compile();
    const c = app.get(Consumer);
    expect(c.byClass).toBeInstanceOf(SpecUsernamePrepareKey);
    expect(c.byClass).toBeInstanceOf(PrepareKey);
    expect(c.sku).toBeInstanceOf(SpecSkuPrepareKey);
    expect(await c.byClass.prepare('alice', { userId: '1' })).toBe(true);
    expect(await c.byName.prepare('alice', { userId: '2' })).toBe(false);
    expect(await c.bySimpleName.holder('alice')).toBe('1');
    expect(getPrepareKeyToken(SpecUsernamePrepareKey)).toBe(getPrepareKeyToken('spec-username'));
    await app.close();
  });

  it('the contract rows on the memory backend, with a key change and usingPrepare', async () => {
    const factory: PrepareKeyFactory = new MemoryPrepareKeyFactory();
    const keys = factory.create<{ a: number; b: number }>('spec-rows');
    expect(await keys.prepare('k', { a: 1, b: 2 })).toBe(true);
    expect(await keys.prepare('k', { b: 2, a: 1 })).toBe(false);
    expect(await keys.rollback('k', { b: 2, a: 1 })).toBe(true);
    expect(await keys.getValue('k')).toBeUndefined();
    expect(await keys.prepare('k', toTtlAt({ a: 1, b: 1 }, Date.now() - 1))).toBe(true);
    expect(await keys.get('k')).toBeUndefined();
    expect((await keys.getValue('k'))?.value).toEqual({ a: 1, b: 1 });
    expect(await keys.reprepare('k', { a: 9, b: 9 })).toBe(false);
    expect(await keys.prepare('k', { a: 3, b: 3 })).toBe(true);
    expect(await keys.reprepare('k', { a: 3, b: 3 }, { a: 4, b: 4 })).toBe(true);
    expect(await keys.reprepare('k', { a: 4, b: 4 }, 'k2', { a: 4, b: 4 })).toBe(true);
    expect(await keys.get('k')).toBeUndefined();
    await expect(keys.reprepare('k2', { a: 4, b: 4 }, 'k2', { a: 4, b: 4 })).rejects.toThrow(TypeError);
    // Old key held by another value: the new key is released. Old key free: it stays held
    // (neither key held never happens).
    await keys.prepare('other', { a: 7, b: 7 });
    await expect(keys.reprepare('other', { a: 0, b: 0 }, 'k3', { a: 0, b: 0 })).rejects.toBeInstanceOf(
      PrepareKeyStateError,
    );
    expect(await keys.getValue('k3')).toBeUndefined();
    await expect(keys.reprepare('nope', { a: 0, b: 0 }, 'k4', { a: 0, b: 0 })).rejects.toBeInstanceOf(
      PrepareKeyStateError,
    );
    expect(await keys.get('k4')).toEqual({ a: 0, b: 0 });
    await expect(keys.prepare({ $ne: null } as unknown as string, { a: 1, b: 1 })).rejects.toThrow();
    const seen: boolean[] = [];
    await expect(
      keys.usingPrepare('u', { a: 5, b: 5 }, (prepared) => {
        seen.push(prepared);
        throw new Error('then failed');
      }),
    ).rejects.toThrow('then failed');
    expect(seen).toEqual([true]);
    expect(await keys.getValue('u')).toBeUndefined();
    const report = await reconcileReservations(keys, () => false);
    expect(report.released).toBe(3); // k2, other, k4
  });
});

describe('SPEC §2 id-generator', () => {
  it('generators: SnowflakeId, SafeJsSnowflakeId, CosIdGenerator, ClockSync, NanoIdGenerator', () => {
    const snow = new SnowflakeId({ machineId: 5 });
    const a = snow.generate();
    const b = snow.generate();
    expect(b > a).toBe(true);
    expect(typeof snow.generateBigInt()).toBe('bigint');
    expect(snow.parse(a).machineId).toBe(5);
    const safe = new SafeJsSnowflakeId({ machineId: 1 });
    expect(Number.isSafeInteger(safe.generateNumber())).toBe(true);
    const cos = new CosIdGenerator({ machineId: 7 });
    const id = cos.generate();
    expect(id).toHaveLength(15);
    expect(cos.parse(id)).toEqual(
      expect.objectContaining({ machineId: 7, sequence: expect.any(Number), timestamp: expect.any(Number) }),
    );
    const synced: IdGenerator = new ClockSync(new CosIdGenerator({ machineId: 8 }), {
      spinThresholdMs: 5,
      brokenThresholdMs: 50,
    });
    expect(synced.generate()).toHaveLength(15);
    expect(new NanoIdGenerator({ size: 10 }).generate()).toHaveLength(10);
  });

  it('a clock moving back throws ClockBackwardsError', () => {
    let now = 1_700_000_000_000;
    const snow = new SnowflakeId({ machineId: 1, clock: () => now });
    snow.generate();
    now -= 1000;
    expect(() => snow.generate()).toThrow(ClockBackwardsError);
  });

  it('module: GlobalIdGenerator, generateGlobalId, aggregates, @Order factory chain, generateId', async () => {
    @Aggregate({ name: 'spec-invoice', context: 'billing' })
    class Invoice {}
    @Aggregate({ name: 'spec-order' })
    class Order_ {}

    @Order(1)
    class InvoiceFactory extends AggregateIdGeneratorFactory {
      create(named: NamedAggregate): IdGenerator | null {
        return named.aggregateName === 'spec-invoice' ? { generate: () => 'INV-1' } : null;
      }
    }
    const app = await Test.createTestingModule({
      imports: [
        IdGeneratorModule.forRoot({ machine: new ManualMachineIdDistributor(3), aggregateFactories: [InvoiceFactory] }),
      ],
    }).compile();
    await app.init();
    expect(app.get(GlobalIdGenerator).generate()).toHaveLength(15);
    expect(generateGlobalId()).toHaveLength(15);
    const registrar = app.get(AggregateIdGeneratorRegistrar);
    expect(registrar.get(Invoice).generate()).toBe('INV-1');
    expect(registrar.get(Order_)).toBe(registrar.get(Order_));
    expect(generateId(Order_)).toHaveLength(15);
    await app.close();
    expect(NotInitializedGlobalIdGeneratorError).toBeDefined();
  });
});

describe('SPEC §3 repository', () => {
  @Aggregate({ name: 'spec-counter' })
  class Counter extends AggregateRoot<string> {
    value = 0;
  }

  const received: DataSyncEvent[] = [];
  @Injectable()
  class Projector {
    @OnDataSync(Counter)
    on(events: readonly DataSyncEvent[]) {
      received.push(...events);
    }
  }

  @Injectable()
  class Service {
    constructor(@InjectRepository(Counter) readonly repo: IRepository<string, Counter>) {}
  }

  let close: () => Promise<void>;
  afterAll(() => close?.());

  it('insert fills an empty ID, update locks on the version, events flow after the write, currentVersion -1 when gone', async () => {
    const app = await Test.createTestingModule({
      imports: [
        IdGeneratorModule.forRoot({ machine: 4 }),
        RepositoryModule.forRoot({}),
        RepositoryModule.forFeature([Counter]),
      ],
      providers: [Projector, Service],
    }).compile();
    await app.init();
    close = () => app.close();
    const repo = app.get(Service).repo;
    expect(repo).toBeInstanceOf(InMemoryRepository);

    const c = new Counter();
    expect(c.isNew()).toBe(true);
    await repo.save(c);
    expect(c.id).toHaveLength(15);
    expect(await repo.currentVersion(c.id)).toBe(1);
    expect(received.map((e) => [e.type, e.version])).toEqual([['UPSERT', 1]]);

    const x = (await repo.findById(c.id))!;
    const y = (await repo.findById(c.id))!;
    x.value++;
    await repo.update(x);
    y.value++;
    await expect(repo.update(y)).rejects.toBeInstanceOf(OptimisticLockError);
    expect(received).toHaveLength(2);

    await retryOnConflict(
      async () => {
        const z = (await repo.findById(c.id))!;
        z.value++;
        await repo.update(z);
      },
      { attempts: 3 },
    );
    expect((await repo.findById(c.id))!.value).toBe(2);

    await repo.remove((await repo.findById(c.id))!);
    expect(received.at(-1)?.type).toBe('PURGE');
    expect(await repo.currentVersion(c.id)).toBe(-1);
    expect(await repo.findById(c.id)).toBeNull();
    expect(await repo.existsById(c.id)).toBe(false);
  });
});
