// The PrepareKey health indicator without a store to reach: the memory backend, a factory
// written elsewhere, a disabled module, and where Nest finds it. On every real backend, behind
// the fault proxy: test/prepare-key/prepare-key.health-indicator.spec.ts.
import { describe, expect, it } from '@jest/globals';
import { Controller, Get, Inject, Module } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { HealthCheckService, HealthIndicatorService, TerminusModule } from '@nestjs/terminus';
import { MemoryPrepareKeyFactory } from '../backends/memory/memory-prepare-key.factory.js';
import type { PrepareKey } from '../prepare-key.js';
import { PrepareKeyFactory } from '../prepare-key.factory.js';
import { PrepareKeyModule } from '../prepare-key.module.js';
import { PrepareKeyHealthIndicator } from './prepare-key.health-indicator.js';

const indicatorFor = (factory: PrepareKeyFactory) =>
  new PrepareKeyHealthIndicator(new HealthIndicatorService(), { factory });

describe('PrepareKeyHealthIndicator', () => {
  it('is up on the memory backend, which has no store to reach', async () => {
    const result = await indicatorFor(new MemoryPrepareKeyFactory()).isHealthy();
    expect(result).toEqual({
      'prepare-key': { status: 'up', backend: 'MemoryPrepareKeyFactory', responseTime: expect.any(Number) },
    });
  });

  it('reads a probe key through a factory written elsewhere, and reports its error as down', async () => {
    const got: string[] = [];
    let failure: Error | undefined;
    class CustomFactory extends PrepareKeyFactory {
      create<V>(name: string): PrepareKey<V> {
        const key = new MemoryPrepareKeyFactory().create<V>(name);
        return Object.assign(Object.create(key) as PrepareKey<V>, {
          get: async (k: string) => {
            got.push(`${name}/${k}`);
            if (failure) throw failure;
            return undefined;
          },
        });
      }
    }
    const indicator = indicatorFor(new CustomFactory());
    expect((await indicator.isHealthy())['prepare-key']).toMatchObject({ status: 'up', backend: 'CustomFactory' });
    expect(got).toEqual(['ddd-kit-ping/probe']);
    failure = new Error('connection refused');
    expect((await indicator.isHealthy())['prepare-key']).toMatchObject({
      status: 'down',
      message: 'CustomFactory: connection refused',
    });

    // One that implements the contract structurally (no ping() of its own) gets the same probe.
    failure = undefined;
    got.length = 0;
    const structural = { create: <V>(name: string) => new CustomFactory().create<V>(name) } as PrepareKeyFactory;
    expect((await indicatorFor(structural).isHealthy())['prepare-key']).toMatchObject({
      status: 'up',
      backend: 'PrepareKeyFactory',
    });
    expect(got).toEqual(['ddd-kit-ping/probe']);
  });

  it('answers a probe without a warning in the log (terminus deprecates adding the value attempt() returns)', async () => {
    const warnings: unknown[] = [];
    const logger = {
      log: () => undefined,
      error: (m: unknown) => warnings.push(m),
      warn: (m: unknown) => warnings.push(m),
    };
    // A key of its own: terminus warns once per key and process, and the cases above used the default one.
    const result = await new PrepareKeyHealthIndicator(new HealthIndicatorService(logger), {
      factory: new MemoryPrepareKeyFactory(),
    }).isHealthy('quiet');
    expect(result).toEqual({
      quiet: { status: 'up', backend: 'MemoryPrepareKeyFactory', responseTime: expect.any(Number) },
    });
    expect(warnings).toEqual([]);
  });

  it('is up and says so when the module is disabled or has no factory (nothing to reach)', async () => {
    expect(await new PrepareKeyHealthIndicator(new HealthIndicatorService(), { enabled: false }).isHealthy()).toEqual({
      'prepare-key': { status: 'up', backend: 'disabled' },
    });
    expect(await new PrepareKeyHealthIndicator(new HealthIndicatorService(), {}).isHealthy()).toEqual({
      'prepare-key': { status: 'up', backend: 'none' },
    });
  });

  it('finds the factory PrepareKeyModule was given, in a module that imports TerminusModule', async () => {
    @Controller('health')
    class HealthController {
      constructor(
        @Inject(HealthCheckService) private readonly health: HealthCheckService,
        @Inject(PrepareKeyHealthIndicator) private readonly prepareKey: PrepareKeyHealthIndicator,
      ) {}

      @Get()
      check() {
        return this.health.check([() => this.prepareKey.isHealthy()]);
      }
    }
    @Module({ imports: [TerminusModule], controllers: [HealthController], providers: [PrepareKeyHealthIndicator] })
    class HealthModule {}

    const moduleRef = await Test.createTestingModule({
      imports: [
        PrepareKeyModule.forRootAsync({ useFactory: () => ({ factory: new MemoryPrepareKeyFactory() }) }),
        HealthModule,
      ],
    }).compile();
    try {
      const result = await moduleRef.get(HealthController).check();
      expect(result).toMatchObject({
        status: 'ok',
        details: { 'prepare-key': { status: 'up', backend: 'MemoryPrepareKeyFactory' } },
      });
    } finally {
      await moduleRef.close();
    }
  });
});
