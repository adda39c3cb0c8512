import type { PgResult } from '@ddd-kit/core/postgres';
import type { Pool } from 'pg';
import type { DataSyncEvent } from '../../data-sync/data-sync-event.js';
import type { OutboxStore } from '../../outbox/outbox.interfaces.js';
import type { OutboxJoinedWrite } from './postgres-outbox.join.js';
import { asResult, type PostgresStatementRunner } from './postgres-repository.execution.js';
import type { PostgresStatement } from './postgres-repository.statements.js';

/**
 * An outbox a PostgresRepository writes its events to within its own statement: the table outbox
 * (PostgresOutboxStore) or the one without a table (PostgresWalOutboxStore, a subpath of its own,
 * hence recognised by this method rather than by its class).
 */
export interface PostgresWriteJoiningOutbox extends OutboxStore {
  joinWrite(
    pool: Pool,
    repository: string,
    write: PostgresStatement,
    events: readonly DataSyncEvent[],
  ): Promise<OutboxJoinedWrite>;
}

export function joinsPostgresWrites(outbox: OutboxStore): outbox is PostgresWriteJoiningOutbox {
  return typeof (outbox as Partial<PostgresWriteJoiningOutbox>).joinWrite === 'function';
}

/**
 * A PostgresRepository's write with its events: joined with them in one statement by the outbox
 * (PostgresOutboxStore.joinWrite), run with what commits with it; the relays learn of the events
 * once it matched — after the commit, not from a NOTIFY inside it (see OutboxWakeUp). Resolves
 * once `settle` accepted the write's result (a row count of 0: it matched nothing).
 */
export async function writeWithEvents(
  outbox: PostgresWriteJoiningOutbox,
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
