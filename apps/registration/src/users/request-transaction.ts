import { Inject, Injectable } from '@nestjs/common';
import type { Pool } from 'pg';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG, POSTGRES_POOL } from '../infrastructure/infrastructure.constants.js';

/**
 * One transaction per request when the users live in PostgreSQL: the username reservations (on
 * the same pool), the user row, and what commits with it join it, so a request commits all of
 * them or none — no crash window left to reconcile. Elsewhere each write stands alone and the
 * repository keeps the safe order. (`@Transactional()` from @nestjs-cls/transactional with
 * @ddd-kit/transactional-adapter-pg does the same in an application that uses nestjs-cls.)
 */
@Injectable()
export class RequestTransaction {
  private readonly pool: Pool | null;

  constructor(@Inject(APP_CONFIG) config: AppConfig, @Inject(POSTGRES_POOL) pool: Pool | null) {
    this.pool = config.repositoryBackend === 'postgres' ? pool : null;
  }

  async run<R>(work: () => Promise<R>): Promise<R> {
    if (this.pool === null) return work();
    const { runInTransaction } = await import('@ddd-kit/transactional-adapter-pg');
    return runInTransaction(this.pool, () => work());
  }
}
