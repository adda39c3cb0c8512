// The indicator where no store is involved; on a lease from Redis (renewed, run out, lost,
// released) it is tested in test/id-generator/machine-id.health-indicator.spec.ts.
import { describe, expect, it } from '@jest/globals';
import { Controller, Get, Inject, Module } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { HealthCheckService, HealthIndicatorService, TerminusModule } from '@nestjs/terminus';
import { MachineIdHolder } from '../machine/machine-id-holder.js';
import { ManualMachineIdDistributor } from '../machine/manual-machine-id-distributor.js';
import { IdGeneratorModule } from '../module/id-generator.module.js';
import { MachineIdHealthIndicator } from './machine-id.health-indicator.js';

const quiet = { log: () => undefined, warn: () => undefined, error: () => undefined };

describe('MachineIdHealthIndicator', () => {
  it('reports a fixed machine ID as held for ever (remainingMs null)', async () => {
    const holder = await MachineIdHolder.acquire({
      distributor: new ManualMachineIdDistributor(7),
      namespace: 'n',
      machineBits: 10,
      instanceId: 'i',
      logger: quiet,
    });
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
    await holder.release();
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
