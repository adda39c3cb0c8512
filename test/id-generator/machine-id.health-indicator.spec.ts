// The machine-ID health indicator on a holder leasing from a real Redis through the fault proxy:
// up while heartbeats get through, down once the lease runs out (Redis black-holed), lost (the
// ID taken by another instance while this one was cut off, and none free to replace it), or
// released; up again once the lease is renewed or replaced. The holder's lease runs on clocks the
// cases move (ManualClocks): "the lease ran out" happens when a case says, not when a loaded
// machine happens to delay a heartbeat.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { HealthIndicatorService } from '@nestjs/terminus';
import { Redis } from 'ioredis';
import { MachineIdHolder, MachineIdOverflowError, RedisMachineIdDistributor } from '@ddd-kit/id-generator';
import { MachineIdHealthIndicator, type MachineIdHealthCheckOptions } from '@ddd-kit/id-generator/health';
import { proxyUrl, type FaultProxy } from '../support/fault-proxy/index.js';
import { redisUrl, uniqueName } from '../support/servers.js';
import { waitFor } from '../support/wait.js';
import { ManualClocks } from '@ddd-kit/id-generator/testing';

const quiet = { log: () => undefined, warn: () => undefined, error: () => undefined };

type Entry = Record<string, unknown> & { status: string };

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
    const clocks = new ManualClocks();
    const distributor = new RedisMachineIdDistributor(proxied, {
      safeGuardMs: options.safeGuardMs,
      guardIntervalMs: options.guardIntervalMs,
      clock: clocks.now,
    });
    const holder = await MachineIdHolder.acquire({
      distributor,
      namespace,
      machineBits: options.machineBits ?? 4,
      instanceId: 'web-1',
      ...clocks.holderClocks,
      logger: quiet,
    });
    holders.push(holder);
    const indicator = new MachineIdHealthIndicator(new HealthIndicatorService(), holder);
    const entry = async (check?: MachineIdHealthCheckOptions) =>
      (await indicator.isHealthy('lease', check)).lease as Entry;
    return { holder, namespace, clocks, indicator, entry };
  }

  it('is up with the machine ID and the lease time left while heartbeats get through; down once the lease runs out; up again after', async () => {
    const { holder, namespace, clocks, indicator, entry } = await leased({ safeGuardMs: 800, guardIntervalMs: 100 });
    expect(await indicator.isHealthy()).toEqual({
      'machine-id': {
        status: 'up',
        held: true,
        lost: false,
        machineId: holder.machineId,
        namespace,
        instanceId: 'web-1',
        remainingMs: 720, // the lease: safeGuardMs less a tenth, none of it spent on the holder's clocks
      },
    });

    proxy.blackhole();
    clocks.advance(720); // no heartbeat gets through meanwhile
    expect(await entry({ minRemainingMs: 0 })).toEqual({
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
    const up = await waitFor('up after a heartbeat got through', async () => {
      const e = await entry();
      return e.status === 'up' && e;
    });
    expect(up).toMatchObject({ held: true, lost: false, remainingMs: 720 });
  });

  it('by default, readiness goes down after three missed heartbeats, before the lease is lost (SPEC §2)', async () => {
    const { holder, clocks, entry } = await leased({ safeGuardMs: 10_000, guardIntervalMs: 100 });
    // The lease is 9 s; three heartbeats are 300 ms: down once less than 8.7 s is left.
    expect((await entry()).status).toBe('up');
    proxy.blackhole();
    try {
      clocks.advance(300); // three heartbeats missed, to the millisecond: 8,700 ms left
      expect((await entry()).status).toBe('up');
      clocks.advance(1);
      const down = await entry();
      expect(down).toMatchObject({ status: 'down', remainingMs: 8_699 });
      expect(down.message).toMatch(/has 8699 ms left, less than 8700: heartbeats are failing$/);
      expect(holder.lease.valid).toBe(true);
      expect(holder.lease.remainingMs).toBeGreaterThan(8_000);
    } finally {
      proxy.heal({ reset: true });
    }
    expect(
      await waitFor('up after a heartbeat got through', async () => {
        const e = await entry();
        return e.status === 'up' && e;
      }),
    ).toMatchObject({ held: true });
  });

  it('with minRemainingMs, is down as soon as missed heartbeats leave less than that, before the lease runs out', async () => {
    const { holder, clocks, entry } = await leased({ safeGuardMs: 10_000, guardIntervalMs: 100 });
    // The lease is 9 s (safeGuardMs less a second): down once less than 8 s is left.
    const options = { minRemainingMs: 8_000 };
    expect((await entry(options)).status).toBe('up');
    proxy.blackhole();
    try {
      clocks.advance(1_000);
      expect((await entry(options)).status).toBe('up');
      clocks.advance(1);
      const down = await entry(options);
      expect(down.status).toBe('down');
      expect(down.message).toMatch(
        new RegExp(
          `^the lease of machine ID ${holder.machineId} has 7999 ms left, less than 8000: heartbeats are failing$`,
        ),
      );
      expect(holder.lease.valid).toBe(true); // IDs may still be issued: only the margin is gone
    } finally {
      proxy.heal({ reset: true });
    }
    expect(
      await waitFor('up after a heartbeat got through', async () => {
        const e = await entry(options);
        return e.status === 'up' && e;
      }),
    ).toMatchObject({ held: true });
  });

  it('is down while a lost machine ID cannot be replaced, and up on the replacement', async () => {
    // Redis decides when the holder's deadline has passed: its 100 ms lease runs on real time.
    const { holder, namespace, entry } = await leased({ machineBits: 1, safeGuardMs: 100, guardIntervalMs: 30 });
    const direct = new RedisMachineIdDistributor(redis, { safeGuardMs: 60_000 });
    // The other of the two IDs is held by someone else; this holder is cut off past its lease
    // and a newcomer takes its ID: no ID is left for the replacement.
    const other = await direct.distribute({ namespace, machineBits: 1, instanceId: 'other' });
    const lostId = holder.machineId;
    proxy.blackhole();
    const newcomer = await waitFor("the cut-off holder's ID free for a newcomer", () =>
      direct.distribute({ namespace, machineBits: 1, instanceId: 'newcomer' }).catch((error: unknown) => {
        if (error instanceof MachineIdOverflowError) return undefined;
        throw error;
      }),
    );
    expect(newcomer.machineId).toBe(lostId);
    proxy.heal({ reset: true });

    const lost = await waitFor('the loss reported', async () => {
      const e = await entry();
      return e.lost === true && e;
    });
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
      lastTimestamp: 0, // it issued nothing
    });
    expect(
      await waitFor('up on the replacement', async () => {
        const e = await entry();
        return e.status === 'up' && e;
      }),
    ).toMatchObject({
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
});
