import { Inject, Injectable } from '@nestjs/common';
import { HealthIndicatorService, type HealthIndicatorResult } from '@nestjs/terminus';
import type { RepositoryBackend } from '../backends/repository-backend.interface.js';
import { within } from './within.js';
import { REPOSITORY_BACKENDS } from '../repository.constants.js';

export interface RepositoryHealthCheckOptions {
  /** Down when a store has not answered within this many milliseconds (default 1,000). */
  timeoutMs?: number;
}

export const DEFAULT_REPOSITORY_HEALTH_TIMEOUT_MS = 1_000;

/**
 * `@nestjs/terminus` indicator of the backends `RepositoryModule` was configured with: one
 * `ping` of each backend that has one (the Mongoose connection's `ping` command, `SELECT 1` on
 * the pg.Pool, yours), in parallel, down when one fails or takes longer than `timeoutMs`. With
 * nothing to ping (in-memory repositories) it is up. Provide it in a module that imports
 * `TerminusModule`.
 *
 * Up: `{ stores: ['mongodb', 'postgresql'], responseTime }` (the backends pinged; with none, the
 * backends configured, `['memory']`); down: `{ message }` naming the backend
 * (`postgresql: no answer within 1000 ms`).
 */
@Injectable()
export class RepositoryHealthIndicator {
  constructor(
    @Inject(HealthIndicatorService) private readonly health: HealthIndicatorService,
    @Inject(REPOSITORY_BACKENDS) private readonly backends: readonly RepositoryBackend[],
  ) {}

  async isHealthy<const Key extends string = 'repository'>(
    key: Key = 'repository' as Key,
    options: RepositoryHealthCheckOptions = {},
  ): Promise<HealthIndicatorResult<Key>> {
    const session = this.health.check(key);
    const pinged = this.backends.filter((backend) => typeof backend.ping === 'function');
    if (pinged.length === 0) return session.up({ stores: this.backends.map((backend) => backend.name) });
    const timeoutMs = options.timeoutMs ?? DEFAULT_REPOSITORY_HEALTH_TIMEOUT_MS;
    const stores = pinged.map((backend) => backend.name);
    return session
      .attempt(async () => {
        // Each backend on its own deadline, so that the message names the one that did not answer.
        const results = await Promise.allSettled(
          pinged.map((backend) =>
            within(
              timeoutMs,
              Promise.resolve().then(() => backend.ping!()),
            ),
          ),
        );
        const failed = results.flatMap((result, i) =>
          result.status === 'rejected'
            ? [`${pinged[i].name}: ${result.reason instanceof Error ? result.reason.message : String(result.reason)}`]
            : [],
        );
        if (failed.length > 0) throw new Error(failed.join('; '));
      })
      .withSuccessData({ stores });
  }
}
