import { Inject, Injectable } from '@nestjs/common';
import { HealthIndicatorService, type HealthIndicatorResult } from '@nestjs/terminus';
import type { Connection } from 'mongoose';
import { REPOSITORY_CONNECTION, REPOSITORY_POSTGRES } from '../repository.constants.js';
import type { RepositoryConnectionHandle, RepositoryPostgresHandle } from '../repository.providers.js';

export interface RepositoryHealthCheckOptions {
  /** Down when a store has not answered within this many milliseconds (default 1,000). */
  timeoutMs?: number;
}

export const DEFAULT_REPOSITORY_HEALTH_TIMEOUT_MS = 1_000;

/** Mongoose's readyState of an open connection. */
const CONNECTED = 1;

/**
 * `@nestjs/terminus` indicator of the stores `RepositoryModule` was configured with: one round
 * trip to each (`ping` on the Mongoose connection, `SELECT 1` on the pg.Pool), in parallel, down
 * when one fails or takes longer than `timeoutMs`. With neither (in-memory repositories) there is
 * nothing to reach and it is up. Provide it in a module that imports `TerminusModule`.
 *
 * Up: `{ stores: ['mongodb', 'postgresql'], responseTime }`; down: `{ message }` naming the store
 * (`postgresql: no answer within 1000 ms`).
 */
@Injectable()
export class RepositoryHealthIndicator {
  constructor(
    @Inject(HealthIndicatorService) private readonly health: HealthIndicatorService,
    @Inject(REPOSITORY_CONNECTION) private readonly mongo: RepositoryConnectionHandle,
    @Inject(REPOSITORY_POSTGRES) private readonly postgres: RepositoryPostgresHandle,
  ) {}

  async isHealthy<const Key extends string = 'repository'>(
    key: Key = 'repository' as Key,
    options: RepositoryHealthCheckOptions = {},
  ): Promise<HealthIndicatorResult<Key>> {
    const session = this.health.check(key);
    const checks: Array<[string, () => Promise<unknown>]> = [];
    const { connection } = this.mongo;
    const { pool } = this.postgres;
    if (connection !== null) checks.push(['mongodb', () => pingMongo(connection)]);
    // On the pool itself: a health check never joins (or waits for) an ambient transaction.
    if (pool !== null) checks.push(['postgresql', () => pool.query('SELECT 1')]);
    if (checks.length === 0) return session.up({ stores: ['memory'] });
    const timeoutMs = options.timeoutMs ?? DEFAULT_REPOSITORY_HEALTH_TIMEOUT_MS;
    return session.attempt(async () => {
      // Each store on its own deadline, so that the message names the one that did not answer.
      const results = await Promise.allSettled(checks.map(([, check]) => within(timeoutMs, check())));
      const failed = results.flatMap((result, i) =>
        result.status === 'rejected'
          ? [`${checks[i][0]}: ${result.reason instanceof Error ? result.reason.message : String(result.reason)}`]
          : [],
      );
      if (failed.length > 0) throw new Error(failed.join('; '));
      return { stores: checks.map(([store]) => store) };
    });
  }
}

function within<T>(ms: number, work: Promise<T>): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  // A late answer (or failure) of the store is of no interest once the deadline passed.
  work.catch(() => undefined);
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}

/** The `ping` command; a connection that is not open fails at once (mongoose would wait for it). */
async function pingMongo(connection: Connection): Promise<void> {
  const db = connection.db;
  if (connection.readyState !== CONNECTED || db === undefined) {
    throw new Error(`the connection is not open (mongoose readyState ${connection.readyState})`);
  }
  await db.command({ ping: 1 });
}
