import { Injectable } from '@nestjs/common';
import type { Pool } from 'pg';

/**
 * What a request's writes run in. This one runs them as they come: each write stands alone and
 * the repository keeps the safe order (memory, MongoDB).
 */
@Injectable()
export class RequestTransaction {
  run<R>(work: () => Promise<R>): Promise<R> {
    return work();
  }
}

/**
 * One transaction per request when the users live in PostgreSQL: the username reservations (on
 * the same pool), the user row, and what commits with it join it, so a request commits all of
 * them or none — no crash window left to reconcile. (`@Transactional()` from
 * @nestjs-cls/transactional with @ddd-kit/transactional-adapter-pg does the same in an
 * application that uses nestjs-cls.)
 */
export class PostgresRequestTransaction extends RequestTransaction {
  constructor(private readonly pool: Pool) {
    super();
  }

  override async run<R>(work: () => Promise<R>): Promise<R> {
    // Loaded only on PostgreSQL, as pg is.
    const { runInTransaction } = await import('@ddd-kit/transactional-adapter-pg');
    return runInTransaction(this.pool, () => work());
  }
}
