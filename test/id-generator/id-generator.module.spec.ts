// IdGeneratorModule leasing its machine ID from a real Redis: one ID per application, given back
// on shutdown (also when bootstrap fails), and a lost ID replaced while the generators follow.
// The module without a store is tested beside it (libs/id-generator/src/module).
import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Injectable } from '@nestjs/common';
import { Test, type TestingModule } from '@nestjs/testing';
import { Redis } from 'ioredis';
import {
  Aggregate,
  AggregateIdGeneratorRegistrar,
  CosIdGenerator,
  GlobalIdGenerator,
  IdGeneratorModule,
  InjectIdGenerator,
  MachineIdHolder,
  MachineIdOverflowError,
  MachineIdReleasedError,
  Radix62,
  RedisMachineIdDistributor,
  SnowflakeId,
  type IdGenerator,
  type IdGeneratorContext,
  type IdGeneratorModuleOptions,
} from '@ddd-kit/id-generator';
import { getIdGeneratorContextToken } from '../../libs/id-generator/src/module/id-generator.utils.js';
import { proxyUrl } from '../support/fault-proxy/index.js';
import { redisUrl, uniqueName } from '../support/servers.js';
import { waitFor } from '../support/wait.js';

@Aggregate({ name: 'order', context: 'sales' })
class OrderAggregate {}

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

describe('IdGeneratorModule on Redis', () => {
  let redis: Redis;
  let namespace: string;
  let distributor: RedisMachineIdDistributor;

  beforeAll(() => {
    redis = new Redis(redisUrl());
    namespace = uniqueName('module');
    distributor = new RedisMachineIdDistributor(redis, { safeGuardMs: 3_000, guardIntervalMs: 200 });
  });

  afterAll(async () => {
    await Promise.all(Object.values(distributor.keys(namespace)).map((k) => redis.del(k)));
    redis.disconnect();
  });

  it('distributes a machine ID per application and reverts it on shutdown (with the last timestamp used)', async () => {
    const keys = distributor.keys(namespace);
    const one = await start({ machine: distributor, namespace, instanceId: 'app-1' });
    const two = await start({ machine: distributor, namespace, instanceId: 'app-2' });
    const holderOne = one.get(MachineIdHolder);
    const holderTwo = two.get(MachineIdHolder);
    expect(holderOne.machineId).not.toBe(holderTwo.machineId);
    expect(await redis.hgetall(keys.owners)).toEqual({
      [holderOne.machineId]: 'app-1',
      [holderTwo.machineId]: 'app-2',
    });

    const global = one.get(GlobalIdGenerator);
    let last = '';
    for (let i = 0; i < 1_000; i++) last = global.generate();
    await one.close();

    expect(await redis.hgetall(keys.owners)).toEqual({ [holderTwo.machineId]: 'app-2' });
    expect(await redis.zrange(keys.released, 0, -1)).toEqual([String(holderOne.machineId)]);
    expect(Number(await redis.hget(keys.timestamps, String(holderOne.machineId)))).toBeGreaterThanOrEqual(
      CosIdGenerator.parse(last).timestamp,
    );
    // In a later millisecond the generator checks its lease again: nothing is issued after the release.
    await waitFor('a millisecond after the last ID', () => Date.now() > CosIdGenerator.parse(last).timestamp);
    expect(() => global.generate()).toThrow(MachineIdReleasedError);

    // The released ID goes to the next application, which starts after its last timestamp.
    const three = await start({ machine: distributor, namespace, instanceId: 'app-3' });
    expect(three.get(MachineIdHolder).machineId).toBe(holderOne.machineId);
    expect(CosIdGenerator.parse(three.get(GlobalIdGenerator).generate()).timestamp).toBeGreaterThan(
      CosIdGenerator.parse(last).timestamp,
    );
    await Promise.all([two.close(), three.close()]);
    expect(await redis.hlen(keys.owners)).toBe(0);
  });

  it('gives the machine ID back when bootstrap fails after it was taken', async () => {
    const failing = start({
      machine: distributor,
      namespace,
      instanceId: 'broken',
      generators: {
        bad: () => {
          throw new Error('generator factory failed');
        },
      },
    });
    await expect(failing).rejects.toThrow('generator factory failed');
    const keys = distributor.keys(namespace);
    expect(await redis.hget(keys.instances, 'broken')).toBeNull();
    expect(Object.values(await redis.hgetall(keys.owners))).not.toContain('broken');
  });

  it('a machine ID lost while the application was cut off: the global, aggregate and named generators move to a new one; generateAsync() waits for it', async () => {
    const ns = uniqueName('module-lost');
    const { proxy, url } = await proxyUrl('redis', redisUrl());
    const proxied = new Redis(url, { retryStrategy: () => 20 });
    proxied.on('error', () => undefined);
    const direct = new RedisMachineIdDistributor(redis, { safeGuardMs: 60_000 });
    const keys = direct.keys(ns);
    try {
      const app = await start(
        {
          // A lease of real time (the module runs its own holder), long enough that a heartbeat late
          // by a loaded machine's stall does not end it before the cut; the cut's end is waited for.
          machine: new RedisMachineIdDistributor(proxied, { safeGuardMs: 2_000, guardIntervalMs: 200 }),
          namespace: ns,
          machineBits: 2,
          instanceId: 'app',
          // generateAsync() waits for the replacement within brokenThresholdMs of real time:
          // far more than a heartbeat and a distribute take on a loaded machine.
          clockSync: { brokenThresholdMs: 10_000 },
          generators: {
            snow: (ctx) =>
              new SnowflakeId({
                machineId: ctx.machineId,
                machineBits: ctx.machineBits,
                lastTimestamp: ctx.lastTimestamp,
                lease: ctx.lease,
              }),
          },
        },
        { providers: [Consumer] },
      );
      const { global, registrar, snow } = app.get(Consumer);
      const holder = app.get(MachineIdHolder);
      const lost = holder.machineId;
      const fillers = await Promise.all(
        [1, 2, 3].map((i) => direct.distribute({ namespace: ns, machineBits: 2, instanceId: `filler-${i}` })),
      );
      // generateAsync(): the lease runs on real time here, and a late heartbeat is waited out.
      const before = {
        global: await global.generateAsync(),
        order: await registrar.get(OrderAggregate).generateAsync(),
        snow: await (snow as SnowflakeId & { generateAsync(): Promise<string> }).generateAsync(),
      };

      proxy.blackhole();
      // Redis lets the newcomer in once its clock has passed the app's deadline.
      const newcomer = await waitFor("the cut-off application's ID free for a newcomer", () =>
        direct.distribute({ namespace: ns, machineBits: 2, instanceId: 'newcomer' }).catch((error: unknown) => {
          if (error instanceof MachineIdOverflowError) return undefined;
          throw error;
        }),
      );
      expect(newcomer.machineId).toBe(lost);
      const free = fillers[2];
      await direct.revert({
        namespace: ns,
        machineBits: 2,
        instanceId: 'filler-3',
        machineId: free.machineId,
        lastTimestamp: Date.now(),
      });
      // Its lease ended before its deadline in Redis did: nothing is issued meanwhile.
      expect(() => global.generate()).toThrow();
      proxy.heal({ reset: true });

      const after = {
        global: await global.generateAsync(),
        order: await registrar.get(OrderAggregate).generateAsync(),
        snow: await (snow as SnowflakeId & { generateAsync(): Promise<string> }).generateAsync(),
      };
      expect(holder.machineId).toBe(free.machineId);
      expect(app.get<IdGeneratorContext>(getIdGeneratorContextToken()).machineId).toBe(free.machineId);
      expect(CosIdGenerator.parse(after.global).machineId).toBe(free.machineId);
      expect(CosIdGenerator.parse(after.order).machineId).toBe(free.machineId);
      expect((snow as SnowflakeId).parse(after.snow).machineId).toBe(free.machineId);
      expect(snow).toBeInstanceOf(SnowflakeId);
      // Each generator's IDs keep increasing across the move.
      expect(after.global > before.global && after.order > before.order).toBe(true);
      expect(BigInt(Radix62.decode(after.snow)) > BigInt(Radix62.decode(before.snow))).toBe(true);
      expect(CosIdGenerator.parse(global.generate()).machineId).toBe(free.machineId);
      expect(await redis.hget(keys.owners, String(lost))).toBe('newcomer');
      await app.close();
      expect(await redis.hget(keys.owners, String(free.machineId))).toBeNull();
    } finally {
      proxied.disconnect();
      await proxy.close();
      await Promise.all(Object.values(keys).map((k) => redis.del(k)));
    }
  });

  it('defaults the instance ID to host, PID and a random part, distinct per module in one process', async () => {
    const a = await start({ machine: distributor, namespace });
    const b = await start({ machine: distributor, namespace });
    const ia = a.get(MachineIdHolder).instanceId;
    const ib = b.get(MachineIdHolder).instanceId;
    expect(ia).toContain(`:${process.pid}:`);
    expect(ia).not.toBe(ib);
    expect(a.get(MachineIdHolder).machineId).not.toBe(b.get(MachineIdHolder).machineId);
    await Promise.all([a.close(), b.close()]);
  });
});
