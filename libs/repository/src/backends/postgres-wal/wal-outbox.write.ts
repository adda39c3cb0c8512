import { preparedStatement } from '@ddd-kit/core/postgres';
import type { Pool } from 'pg';
import type { DataSyncEvent } from '../../data-sync/data-sync-event.js';
import { firstDueAt } from '../../outbox/outbox-arguments.js';
import type { PostgresStatement } from '../postgres/postgres-repository.statements.js';

/**
 * A repository's conditional write with its events as ONE logical decoding message, in the same
 * statement: `WITH w AS (<the write> RETURNING 1) SELECT pg_logical_emit_message(true, $p, $m)
 * FROM w` — emitted only when the write matched a row (an optimistic-lock miss emits nothing),
 * transactional (a rollback takes it away), and written to the WAL only: no table row, no index
 * entry. The message holds the write's time, when its events are due, and the events, in the
 * order the write collected them. Its row count is 1 when the write matched, 0 otherwise.
 */
export class WalEventsStatements {
  private readonly texts = new Map<string, string>();

  constructor(
    private readonly pool: Pool,
    private readonly prefix: string,
  ) {}

  build(write: PostgresStatement, events: readonly DataSyncEvent[], now = Date.now()): PostgresStatement {
    const values: unknown[] = [...(write.values ?? [])];
    // Checked before the statement is sent: an event refused here leaves nothing written.
    const due = firstDueAt(events, now);
    values.push(this.prefix, JSON.stringify({ s: now, n: due, e: events }));
    return preparedStatement(this.pool, this.text(write.text, values.length - 1), values);
  }

  private text(write: string, prefixAt: number): string {
    let text = this.texts.get(write);
    if (text === undefined) {
      text =
        `WITH w AS (${write} RETURNING 1) ` +
        `SELECT pg_logical_emit_message(true, $${prefixAt}::text, $${prefixAt + 1}::text) FROM w LIMIT 1`;
      this.texts.set(write, text);
    }
    return text;
  }
}
