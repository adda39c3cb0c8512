import { Controller, Get, Inject } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiServiceUnavailableResponse, ApiTags } from '@nestjs/swagger';
import {
  HealthCheck,
  HealthCheckService,
  HealthIndicatorService,
  type HealthCheckResult,
  type HealthIndicatorFunction,
} from '@nestjs/terminus';
import { MachineIdHealthIndicator } from '@ddd-kit/id-generator/health';
import { PrepareKeyHealthIndicator } from '@ddd-kit/prepare-key/health';
import { OutboxRelay } from '@ddd-kit/repository/outbox';
import { OutboxHealthIndicator, RepositoryHealthIndicator } from '@ddd-kit/repository/health';
import type { Redis } from 'ioredis';
import { healthCheckSchema } from './health.openapi.js';

/** The Redis the machine IDs are leased from, when readiness pings it itself (see HealthModule); else null. */
export const MACHINE_ID_REDIS = Symbol('MACHINE_ID_REDIS');

/** How long one store may take to answer a readiness probe. */
const STORE_TIMEOUT_MS = 1_000;

/**
 * - `GET /health/live`: the process answers (no store is asked: a store outage must not get the
 *   process restarted, only taken out of the load balancer).
 * - `GET /health/ready`: every store the app uses answers and the machine ID is held — the
 *   PrepareKey backend, the repository's stores, the lease (and the Redis it is leased from,
 *   when the PrepareKey backend is elsewhere) — and, with the outbox on, its backlog: no pending
 *   event older than the default 60 s (the read model would be that stale) and the outbox store
 *   answering. Dead letters are reported, not failed on: a replay fixes them, no restart does.
 * - `GET /health`: liveness, as it has always been (probes and scripts written against it keep working).
 *
 * Both answer in @nestjs/terminus JSON, 503 when a check is down or the app is shutting down.
 */
@ApiTags('health')
@Controller('health')
export class HealthController {
  constructor(
    @Inject(HealthCheckService) private readonly health: HealthCheckService,
    @Inject(HealthIndicatorService) private readonly indicators: HealthIndicatorService,
    @Inject(PrepareKeyHealthIndicator) private readonly prepareKey: PrepareKeyHealthIndicator,
    @Inject(MachineIdHealthIndicator) private readonly machineId: MachineIdHealthIndicator,
    @Inject(RepositoryHealthIndicator) private readonly repository: RepositoryHealthIndicator,
    @Inject(OutboxHealthIndicator) private readonly outbox: OutboxHealthIndicator,
    // RepositoryModule's relay on a shared repository; null in memory (no outbox).
    @Inject(OutboxRelay) private readonly relay: OutboxRelay | null,
    @Inject(MACHINE_ID_REDIS) private readonly redis: Redis | null,
  ) {}

  @Get()
  // The answers are documented here, 200 and 503 alike: terminus's own (12.2) would replace these
  // and leave `info` out of the 200.
  @HealthCheck({ swaggerDocumentation: false })
  @ApiOperation({ summary: 'Liveness (the same as /health/live)' })
  @ApiOkResponse({ description: 'the process answers', schema: healthCheckSchema('ok') })
  @ApiServiceUnavailableResponse({
    description: 'the app is shutting down',
    schema: healthCheckSchema('shutting_down'),
  })
  check(): Promise<HealthCheckResult> {
    return this.live();
  }

  @Get('live')
  @HealthCheck({ swaggerDocumentation: false })
  @ApiOperation({ summary: 'Liveness: the process answers; no store is asked' })
  @ApiOkResponse({ description: 'the process answers', schema: healthCheckSchema('ok') })
  @ApiServiceUnavailableResponse({
    description: 'the app is shutting down',
    schema: healthCheckSchema('shutting_down'),
  })
  live(): Promise<HealthCheckResult> {
    return this.health.check([]);
  }

  @Get('ready')
  @HealthCheck({ swaggerDocumentation: false })
  @ApiOperation({ summary: 'Readiness: each store in use answers and the machine ID is held' })
  @ApiOkResponse({
    description:
      'ready: `details` has one entry a check (`prepare-key`, `repository`, `machine-id`, and `redis` when only the machine IDs use it), each `up`; `outbox` with the outbox on (`pending`, `oldestPendingAgeMs`, `deadLetters`, `oldestDeadLetterAgeMs`)',
    schema: healthCheckSchema('ok'),
  })
  @ApiServiceUnavailableResponse({
    description:
      'not ready: a store did not answer in time, or the machine ID is lost or its lease ran out, or an outbox event waits longer than 60 s (`error` names which), or the app is shutting down',
    schema: healthCheckSchema('error'),
  })
  ready(): Promise<HealthCheckResult> {
    const checks: HealthIndicatorFunction[] = [
      () => this.prepareKey.isHealthy('prepare-key', { timeoutMs: STORE_TIMEOUT_MS }),
      () => this.repository.isHealthy('repository', { timeoutMs: STORE_TIMEOUT_MS }),
      () => this.machineId.isHealthy('machine-id'),
    ];
    const relay = this.relay;
    if (relay !== null) checks.push(() => this.outbox.isHealthy('outbox', { relay, timeoutMs: STORE_TIMEOUT_MS }));
    const redis = this.redis;
    if (redis !== null) {
      checks.push(() =>
        this.indicators
          .check('redis')
          .attempt(() => redis.ping().then(() => undefined))
          .withTimeout(STORE_TIMEOUT_MS),
      );
    }
    return this.health.check(checks);
  }
}
