import { Module } from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import { MachineIdHealthIndicator } from '@ddd-kit/id-generator/health';
import { PrepareKeyHealthIndicator } from '@ddd-kit/prepare-key/health';
import { OutboxHealthIndicator, RepositoryHealthIndicator } from '@ddd-kit/repository/health';
import { HealthController } from './health.controller.js';

/**
 * Liveness and readiness with @nestjs/terminus: the ddd-kit indicators read the backends the
 * three modules were configured with (their core modules are global), the controller adds the
 * Redis the machine IDs are leased from when no indicator reaches it already.
 */
@Module({
  imports: [TerminusModule.forRoot({ errorLogStyle: 'pretty' })],
  controllers: [HealthController],
  providers: [PrepareKeyHealthIndicator, MachineIdHealthIndicator, RepositoryHealthIndicator, OutboxHealthIndicator],
})
export class HealthModule {}
