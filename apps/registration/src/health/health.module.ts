import { Module, type DynamicModule } from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import { MachineIdHealthIndicator } from '@ddd-kit/id-generator/health';
import { PrepareKeyHealthIndicator } from '@ddd-kit/prepare-key/health';
import { OutboxHealthIndicator, RepositoryHealthIndicator } from '@ddd-kit/repository/health';
import { REDIS_CLIENT } from '../backends/redis.js';
import { HealthController, MACHINE_ID_REDIS } from './health.controller.js';

/**
 * Liveness and readiness with @nestjs/terminus: the ddd-kit indicators read the backends the
 * three modules were configured with (their core modules are global); `pingRedis` adds the
 * Redis the machine IDs are leased from, which no indicator reaches when the reservations are
 * elsewhere.
 */
@Module({})
export class HealthModule {
  static forRoot({ pingRedis }: { pingRedis: boolean }): DynamicModule {
    return {
      module: HealthModule,
      imports: [TerminusModule.forRoot({ errorLogStyle: 'pretty' })],
      controllers: [HealthController],
      providers: [
        PrepareKeyHealthIndicator,
        MachineIdHealthIndicator,
        RepositoryHealthIndicator,
        OutboxHealthIndicator,
        { provide: MACHINE_ID_REDIS, ...(pingRedis ? { useExisting: REDIS_CLIENT } : { useValue: null }) },
      ],
    };
  }
}
