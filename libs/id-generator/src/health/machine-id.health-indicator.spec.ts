// The machine-ID health indicator on a holder leasing from a real Redis through the fault proxy:
// up while heartbeats get through, down once the lease runs out (Redis black-holed), lost (the
// ID taken by another instance while this one was cut off, and none free to replace it), or
// released; up again once the lease is renewed or replaced.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Controller, Get, Inject, Module } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { HealthCheckService, HealthIndicatorService, TerminusModule } from '@nestjs/terminus';
import { Redis } from 'ioredis';
import { proxyUrl, type FaultProxy } from '../../../../test/support/fault-proxy/index.js';
import { redisUrl, uniqueName } from '../../../../test/support/servers.js';
import { MachineIdHolder } from '../machine/machine-id-holder.js';
import { ManualMachineIdDistributor } from '../machine/manual-machine-id-distributor.js';
import { RedisMachineIdDistributor } from '../machine/redis/redis-machine-id-distributor.js';
import { IdGeneratorModule } from '../module/id-generator.module.js';
import { MachineIdHealthIndicator, type MachineIdHealthCheckOptions } from './machine-id.health-indicator.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const quiet = { log: () => undefined, warn: () => undefined, error: () => undefined };

type Entry = Record<string, unknown> & { status: string };

/** Polls the indicator until `accept` holds for its entry; fails with the last entry after a generous deadline. */
async function until(
  indicator: MachineIdHealthIndicator,
  accept: (entry: Entry) => boolean,
  options?: MachineIdHealthCheckOptions,
): Promise<Entry> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const entry = (await indicator.isHealthy('lease', options)).lease as Entry;
    if (accept(entry)) return entry;
    if (Date.now() > deadline)
      throw new Error(`the indicator never reported what was expected; last: ${JSON.stringify(entry)}`);
    await sleep(20);
  }
}

describe('MachineIdHealthIndicator', () => {
  let redis: Redis;
  let proxy: FaultProxy;
  let proxied: Redis;
  const holders: MachineIdHolder[] = [];
  const namespaces: string[] = [];

  beforeAll(async () => {
    redis = new Redis(redisUrl());
    const through = await proxyUrl('redis', redisUrl());
    proxy = through.proxy;
    proxied = new Redis(through.url, { retryStrategy: () => 20 });
    proxied.on('error', () => undefined);
  });

  afterAll(async () => {
    proxy.heal({ reset: true });
    for (const holder of holders) await holder.release().catch(() => undefined);
    const d = new RedisMachineIdDistributor(redis);
    for (const ns of namespaces) await Promise.all(Object.values(d.keys(ns)).map((k) => redis.del(k)));
    proxied.disconnect();
    await proxy.close();
    redis.disconnect();
  });

  async function leased(options: { machineBits?: number; safeGuardMs: number; guardIntervalMs: number }) {
    const namespace = uniqueName('health');
    namespaces.push(namespace);
    const holder = await MachineIdHolder.acquire({
      distributor: new RedisMachineIdDistributor(proxied, {
        safeGuardMs: options.safeGuardMs,
        guardIntervalMs: options.guardIntervalMs,
      }),
      namespace,
      machineBits: options.machineBits ?? 4,
      instanceId: 'web-1',
      logger: quiet,
    });
    holders.push(holder);
    return { holder, namespace, indicator: new MachineIdHealthIndicator(new HealthIndicatorService(), holder) };
  }

  it('is up with the machine ID and the lease time left while heartbeats get through; down once the lease runs out; up again after', async () => {
    const { holder, namespace, indicator } = await leased({ safeGuardMs: 800, guardIntervalMs: 100 });
    expect(await indicator.isHealthy()).toEqual({
      'machine-id': {
        status: 'up',
        held: true,
        lost: false,
        machineId: holder.machineId,
        namespace,
        instanceId: 'web-1',
        remainingMs: expect.any(Number),
      },
    });
    const up = (await indicator.isHealthy())['machine-id'];
    expect(up.remainingMs).toBeGreaterThan(0);
    expect(up.remainingMs).toBeLessThanOrEqual(800);

    proxy.blackhole();
    const down = await until(indicator, (entry) => entry.status === 'down', { minRemainingMs: 0 });
    expect(down).toEqual({
      status: 'down',
      held: false,
      lost: false,
      machineId: holder.machineId,
      namespace,
      instanceId: 'web-1',
      remainingMs: 0,
      message: `the lease of machine ID ${holder.machineId} ran out: no heartbeat reached the distributor in time`,
    });

    proxy.heal({ reset: true });
    expect(await until(indicator, (entry) => entry.status === 'up')).toMatchObject({ held: true, lost: false });
  });

  it('by default, readiness goes down after three missed heartbeats, before the lease is lost (SPEC §2)', async () => {
    const { holder, indicator } = await leased({ safeGuardMs: 10_000, guardIntervalMs: 100 });
    // The lease is 9 s; three heartbeats are 300 ms: down once less than 8.7 s is left.
    expect((await indicator.isHealthy())['machine-id'].status).toBe('up');
    proxy.blackhole();
    try {
      const down = await until(indicator, (entry) => entry.status === 'down');
      expect(down.message).toMatch(/has \d+ ms left, less than 8700: heartbeats are failing$/);
      expect(holder.lease.valid).toBe(true);
      expect(holder.lease.remainingMs).toBeGreaterThan(8_000);
    } finally {
      proxy.heal({ reset: true });
    }
    expect(await until(indicator, (entry) => entry.status === 'up')).toMatchObject({ held: true });
  });

  it('with minRemainingMs, is down as soon as missed heartbeats leave less than that, before the lease runs out', async () => {
    const { holder, indicator } = await leased({ safeGuardMs: 10_000, guardIntervalMs: 100 });
    // The lease is 9 s (safeGuardMs less a second); a heartbeat every 100 ms keeps it above 8.8 s.
    const options = { minRemainingMs: 8_000 };
    expect((await indicator.isHealthy('machine-id', options))['machine-id'].status).toBe('up');
    proxy.blackhole();
    try {
      const down = await until(indicator, (entry) => entry.status === 'down', options);
      expect(down.message).toMatch(
        new RegExp(
          `^the lease of machine ID ${holder.machineId} has \\d+ ms left, less than 8000: heartbeats are failing$`,
        ),
      );
      expect(holder.lease.valid).toBe(true); // IDs may still be issued: only the margin is gone
    } finally {
      proxy.heal({ reset: true });
    }
    expect(await until(indicator, (entry) => entry.status === 'up', options)).toMatchObject({ held: true });
  });

  it('is down while a lost machine ID cannot be replaced, and up on the replacement', async () => {
    const { holder, namespace, indicator } = await leased({ machineBits: 1, safeGuardMs: 300, guardIntervalMs: 100 });
    const direct = new RedisMachineIdDistributor(redis, { safeGuardMs: 60_000 });
    // The other of the two IDs is held by someone else; this holder is cut off past its lease
    // and a newcomer takes its ID: no ID is left for the replacement.
    const other = await direct.distribute({ namespace, machineBits: 1, instanceId: 'other' });
    const lostId = holder.machineId;
    proxy.blackhole();
    await sleep(400);
    const newcomer = await direct.distribute({ namespace, machineBits: 1, instanceId: 'newcomer' });
    expect(newcomer.machineId).toBe(lostId);
    proxy.heal({ reset: true });

    const lost = await until(indicator, (entry) => entry.lost === true);
    expect(lost).toEqual({
      status: 'down',
      held: false,
      lost: true,
      machineId: lostId,
      namespace,
      instanceId: 'web-1',
      remainingMs: 0,
      message: `machine ID ${lostId} was lost to another instance; acquiring a new one`,
    });

    // The other ID is given back: the holder acquires it, and readiness returns.
    await direct.revert({
      namespace,
      machineBits: 1,
      instanceId: 'other',
      machineId: other.machineId,
      lastTimestamp: Date.now(),
    });
    expect(await until(indicator, (entry) => entry.status === 'up')).toMatchObject({
      held: true,
      lost: false,
      machineId: other.machineId,
    });
  });

  it('is down once the machine ID was released (shutdown)', async () => {
    const { holder, indicator } = await leased({ safeGuardMs: 5_000, guardIntervalMs: 100 });
    await holder.release();
    expect((await indicator.isHealthy())['machine-id']).toMatchObject({
      status: 'down',
      held: false,
      message: `machine ID ${holder.machineId} was released`,
    });
  });

  it('reports a fixed machine ID as held for ever (remainingMs null)', async () => {
    const holder = await MachineIdHolder.acquire({
      distributor: new ManualMachineIdDistributor(7),
      namespace: 'n',
      machineBits: 10,
      instanceId: 'i',
      logger: quiet,
    });
    holders.push(holder);
    expect(
      (await new MachineIdHealthIndicator(new HealthIndicatorService(), holder).isHealthy())['machine-id'],
    ).toEqual({
      status: 'up',
      held: true,
      lost: false,
      machineId: 7,
      namespace: 'n',
      instanceId: 'i',
      remainingMs: null,
    });
  });

  it('finds the holder of IdGeneratorModule, in a module that imports TerminusModule', async () => {
    @Controller('health')
    class HealthController {
      constructor(
        @Inject(HealthCheckService) private readonly health: HealthCheckService,
        @Inject(MachineIdHealthIndicator) private readonly machineId: MachineIdHealthIndicator,
      ) {}

      @Get()
      check() {
        return this.health.check([() => this.machineId.isHealthy()]);
      }
    }
    @Module({ imports: [TerminusModule], controllers: [HealthController], providers: [MachineIdHealthIndicator] })
    class HealthModule {}

    const moduleRef = await Test.createTestingModule({
      imports: [IdGeneratorModule.forRoot({ machine: 5 }), HealthModule],
    }).compile();
    await moduleRef.init();
    try {
      expect(await moduleRef.get(HealthController).check()).toMatchObject({
        status: 'ok',
        details: { 'machine-id': { status: 'up', held: true, machineId: 5 } },
      });
    } finally {
      await moduleRef.close();
    }
  });
});
