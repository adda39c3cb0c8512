import { activeTransactionFor } from './ambient-transaction.js';
import { runTransaction } from './run-transaction.js';
import type { PgPool, PgQueryable } from './pg.interfaces.js';
import { PgSchemaMissingError } from './postgres.errors.js';

/** One table a part needs. */
export interface PgTable {
  /** The table as its statements name it: quoted, schema-qualified when configured. */
  readonly name: string;
  /** Idempotent statements creating it and its indexes (`CREATE … IF NOT EXISTS`), in order. */
  readonly ddl: readonly string[];
  /** Columns its statements use: a table that lacks one is reported (CREATE IF NOT EXISTS would say nothing). */
  readonly columns?: readonly string[];
}

export interface PgSchemaOptions {
  /** Who needs the tables, for messages: `'PostgresPrepareKeyFactory'`. */
  readonly owner: string;
  /** The tables, computed once when first needed (a bad declaration then fails there). */
  readonly tables: () => readonly PgTable[];
  /** Create missing tables (default) or only check that they exist (a team that migrates). */
  readonly create: boolean;
}

// Every part creates its tables under this lock: two instances starting at once never race
// `CREATE TABLE IF NOT EXISTS` into a duplicate-catalog-row error, whichever part they start.
const SCHEMA_LOCK = `SELECT pg_advisory_xact_lock(hashtext('ddd-kit:schema'))`;
const COLUMNS = `SELECT attname FROM pg_attribute WHERE attrelid = to_regclass($1) AND attnum > 0 AND NOT attisdropped`;

/**
 * The tables of one PostgreSQL part, created (or checked) once per process, before the part's
 * first statement, on a connection of its own and never inside a use case's transaction: a
 * rollback must not take a table away, and a request holding a pooled connection must not wait
 * for a second one (a burst of first requests would hold every connection and wait for ever).
 * The modules ensure their parts' schemas at bootstrap; a part built by hand does it on first use.
 */
export class PgSchema {
  private ensured = false;
  private pending?: Promise<void>;

  constructor(
    private readonly pool: PgPool,
    private readonly options: PgSchemaOptions,
  ) {}

  /** True once the tables are known to exist. */
  get ready(): boolean {
    return this.ensured;
  }

  /** Every statement creating the part's tables, in order (for a migration). */
  statements(): string[] {
    return this.options.tables().flatMap((table) => [...table.ddl]);
  }

  /**
   * Creates or checks the tables, once: concurrent callers share one attempt; a failed attempt
   * (the server down) is retried by the next call. Inside a transaction on this pool it only
   * checks, on that transaction's connection, and fails naming what is missing.
   */
  ensure(): Promise<void> {
    if (this.ensured) return Promise.resolve();
    const ambient = activeTransactionFor(this.pool);
    if (ambient !== undefined) return this.check(ambient.client, false).then(() => void (this.ensured = true));
    this.pending ??= runTransaction(this.pool, undefined, async (context) => {
      if (this.options.create) {
        await context.guarded.query(SCHEMA_LOCK);
        for (const statement of this.statements()) await context.guarded.query(statement);
      }
      await this.check(context.guarded, this.options.create);
    }).then(
      () => void (this.ensured = true),
      (error: unknown) => {
        this.pending = undefined;
        throw error;
      },
    );
    return this.pending;
  }

  /** Fails naming every missing table or column. */
  private async check(client: PgQueryable, created: boolean): Promise<void> {
    const problems: string[] = [];
    for (const table of this.options.tables()) {
      const found = await client.query(COLUMNS, [table.name]);
      const present = await client.query('SELECT to_regclass($1) IS NOT NULL AS present', [table.name]);
      if (!present.rows[0]?.present) {
        problems.push(`table ${table.name} does not exist`);
        continue;
      }
      const columns = new Set(found.rows.map((row: { attname: string }) => row.attname));
      const missing = (table.columns ?? []).filter((column) => !columns.has(column));
      if (missing.length > 0)
        problems.push(`table ${table.name} has no column ${missing.map((c) => `"${c}"`).join(', ')}`);
    }
    if (problems.length === 0) return;
    const how = created
      ? 'It was created earlier with other columns: migrate it (ALTER TABLE … ADD COLUMN …).'
      : 'Create it at start-up (the module does so unless told not to; or call ensureSchema()), or run the DDL ' +
        `from schemaStatements() in a migration:\n${this.statements().join(';\n')};`;
    throw new PgSchemaMissingError(`${this.options.owner}: ${problems.join('; ')}. ${how}`);
  }
}
