// The `/health` entries of the libraries, as a user of @nestjs/terminus wires them: each
// indicator provided in a module that imports TerminusModule, reading the backends the ddd-kit
// modules were given (memory backends and a fixed machine ID: no server needed).
import { strict as assert } from 'node:assert';
import { Inject, Injectable, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { HealthCheckService, TerminusModule } from '@nestjs/terminus';
import { IdGeneratorModule } from '@ddd-kit/id-generator';
import { MachineIdHealthIndicator } from '@ddd-kit/id-generator/health';
import { MemoryPrepareKeyFactory, PrepareKeyModule } from '@ddd-kit/prepare-key';
import { PrepareKeyHealthIndicator } from '@ddd-kit/prepare-key/health';
import { RepositoryModule } from '@ddd-kit/repository';
import { RepositoryHealthIndicator } from '@ddd-kit/repository/health';

@Injectable()
class Readiness {
  constructor(
    @Inject(HealthCheckService) private readonly health: HealthCheckService,
    @Inject(PrepareKeyHealthIndicator) private readonly prepareKey: PrepareKeyHealthIndicator,
    @Inject(MachineIdHealthIndicator) private readonly machineId: MachineIdHealthIndicator,
    @Inject(RepositoryHealthIndicator) private readonly repository: RepositoryHealthIndicator,
  ) {}

  check() {
    return this.health.check([
      () => this.prepareKey.isHealthy(),
      () => this.machineId.isHealthy(),
      () => this.repository.isHealthy(),
    ]);
  }
}

@Module({
  imports: [TerminusModule],
  providers: [Readiness, PrepareKeyHealthIndicator, MachineIdHealthIndicator, RepositoryHealthIndicator],
})
class HealthModule {}

@Module({
  imports: [
    PrepareKeyModule.forRoot({ factory: new MemoryPrepareKeyFactory() }),
    IdGeneratorModule.forRoot({ machine: 3, namespace: 'packaging' }),
    RepositoryModule.forRoot({}),
    HealthModule,
  ],
})
class AppModule {}

export async function run(): Promise<void> {
  // What Nest and terminus log: a readiness probe warns about nothing (no deprecated terminus API).
  const warnings: unknown[] = [];
  const logger = {
    log: () => undefined,
    warn: (m: unknown) => warnings.push(m),
    error: (m: unknown) => warnings.push(m),
  };
  const app = await NestFactory.createApplicationContext(AppModule, { logger });
  try {
    const result = await app.get(Readiness).check();
    assert.deepEqual(warnings, []);
    assert.equal(result.status, 'ok');
    assert.deepEqual(Object.fromEntries(Object.entries(result.details).map(([key, value]) => [key, value.status])), {
      'prepare-key': 'up',
      'machine-id': 'up',
      repository: 'up',
    });
  } finally {
    await app.close();
  }
}
