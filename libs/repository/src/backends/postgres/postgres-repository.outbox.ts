import type { PgResult } from '@ddd-kit/core/postgres';
import type { Pool } from 'pg';
import type { DataSyncEvent } from '../../data-sync/data-sync-event.js';
import type { PostgresOutboxStore } from './postgres-outbox.store.js';
import { asResult, type PostgresStatementRunner } from './postgres-repository.execution.js';
import type { PostgresStatement } from './postgres-repository.statements.js';

/**
 * A PostgresRepository's write with its events: joined with them in one statement by the outbox
 * (PostgresOutboxStore.joinWrite), run with what commits with it; the relays learn of the events
 * once it matched — after the commit, not from a NOTIFY inside it (see OutboxWakeUp). Resolves
 * once `settle` accepted the write's result (a row count of 0: it matched nothing).
 */
export async function writeWithEvents(
  outbox: PostgresOutboxStore,
  statements: PostgresStatementRunner,
  pool: Pool,
  repository: string,
  write: PostgresStatement,
  events: readonly DataSyncEvent[],
  alongside: readonly PostgresStatement[],
  settle: (result: PgResult) => void,
): Promise<void> {
  const joined = await outbox.joinWrite(pool, repository, write, events);
  const result = await statements.write(joined.statement, alongside, asResult);
  if (result.rowCount !== 0) joined.wrote(result);
  settle(result);
}
