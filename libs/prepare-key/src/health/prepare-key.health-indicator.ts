import { Inject, Injectable } from '@nestjs/common';
import { HealthIndicatorService, type HealthIndicatorResult } from '@nestjs/terminus';
import { PrepareKeyFactory } from '../prepare-key.factory.js';
import { PrepareKeyRegistry } from '../prepare-key.registry.js';

export interface PrepareKeyHealthCheckOptions {
  /** Down when the store has not answered within this many milliseconds (default 1,000). */
  timeoutMs?: number;
  /** A backend other than the one `PrepareKeyModule` was given (an application with several). */
  factory?: PrepareKeyFactory;
}

export const DEFAULT_PREPARE_KEY_HEALTH_TIMEOUT_MS = 1_000;

/** What the indicator checks: PrepareKeyModule's registry, which knows the backend however it was configured. */
export interface PrepareKeyHealthSource {
  readonly factory?: PrepareKeyFactory;
  readonly enabled?: boolean;
}

/**
 * `@nestjs/terminus` indicator of the PrepareKey backend: one round trip (`factory.ping()`:
 * PING on Redis and on every Cluster master, `ping` on MongoDB, `SELECT 1` on PostgreSQL,
 * nothing to reach in memory), down when it fails or takes longer than `timeoutMs`. Provide it
 * in a module that imports `TerminusModule`; it checks the backend `PrepareKeyModule` uses,
 * including the client the module opened itself for `redis: { url }`.
 *
 * Up: `{ backend: 'RedisPrepareKeyFactory', responseTime }`; down: `{ message }`.
 */
@Injectable()
export class PrepareKeyHealthIndicator {
  constructor(
    @Inject(HealthIndicatorService) private readonly health: HealthIndicatorService,
    @Inject(PrepareKeyRegistry) private readonly source: PrepareKeyHealthSource,
  ) {}

  async isHealthy<const Key extends string = 'prepare-key'>(
    key: Key = 'prepare-key' as Key,
    options: PrepareKeyHealthCheckOptions = {},
  ): Promise<HealthIndicatorResult<Key>> {
    const session = this.health.check(key);
    const factory = options.factory ?? this.source.factory;
    if (options.factory === undefined && this.source.enabled === false) return session.up({ backend: 'disabled' });
    // No factory and no key declared is a valid configuration: there is no store to check.
    if (factory === undefined) return session.up({ backend: 'none' });
    const type = (factory as { constructor?: { name?: string } }).constructor;
    // A plain object implementing the contract has no class name worth reporting.
    const backend = type !== undefined && type !== Object && type.name ? type.name : 'PrepareKeyFactory';
    return session
      .attempt(async () => {
        try {
          // A factory that implements the contract structurally may lack ping(): the default applies.
          await (typeof factory.ping === 'function' ? factory.ping() : PrepareKeyFactory.prototype.ping.call(factory));
        } catch (error) {
          throw new Error(`${backend}: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
        }
      })
      .withSuccessData({ backend })
      .withTimeout(options.timeoutMs ?? DEFAULT_PREPARE_KEY_HEALTH_TIMEOUT_MS);
  }
}
