import { PgSchema, preparedStatement, queryableFor, type PgPool } from '@ddd-kit/core/postgres';
import type { Pool, QueryResult } from 'pg';
import { RepositoryConfigurationError } from '../../errors.js';
import { quoteTableName } from './postgres-sql.utils.js';

/** Every column of the table, for the start-up check of an existing one. */
const COLUMNS = [
  'seq',
  'event_id',
  'aggregate',
  'aggregate_id',
  'version',
  'payload',
  'stored_at',
  'attempts',
  'next_attempt_at',
  'last_error',
  'dead_at',
  'owner',
  'lease_until',
];

/**
 * The columns a record is read from, named rather than `*`: a prepared statement whose result
 * changed shape (a column added by a later version's migration) would fail on every connection
 * that prepared it.
 */
export const RETURNED = (alias: string): string =>
  COLUMNS.filter((column) => column !== 'owner' && column !== 'lease_until')
    .map((column) => `${alias}.${column}`)
    .join(', ');

/**
 * The outbox table of one PostgresOutboxStore on its pool: its name (checked and quoted), its
 * DDL, its creation (or check) before the first statement, and `query`, the one way the store's
 * own statements reach it. The columns are described on PostgresOutboxStore.
 */
export class PostgresOutboxTable {
  /** The table as statements name it (checked, quoted, schema-qualified if so configured). */
  readonly name: string;
  private readonly indexPrefix: string;
  private readonly schema: PgSchema;

  constructor(
    private readonly pool: Pool,
    tableName: string,
    createTables: unknown,
  ) {
    this.name = quoteTableName(tableName, 'PostgresOutboxStore: table');
    this.indexPrefix = tableName.split('.').pop()!.slice(0, 40);
    if (createTables !== undefined && typeof createTables !== 'boolean')
      throw new RepositoryConfigurationError('PostgresOutboxStore: createTables must be a boolean');
    this.schema = new PgSchema(pool as unknown as PgPool, {
      owner: 'PostgresOutboxStore',
      create: createTables ?? true,
      part: '@ddd-kit/repository/outbox',
      tables: () => [{ name: this.name, columns: COLUMNS }],
      // Numbered by place, forward only: a change appends the next step (docs/postgresql.md, Migrations).
      migrations: () => [{ name: 'create table', statements: [this.createTableStatement()] }],
    });
  }

  /** The DDL of the table and its indexes. */
  createTableStatement(): string {
    const t = this.name;
    const p = this.indexPrefix;
    return (
      `CREATE TABLE IF NOT EXISTS ${t} (\n` +
      '  seq bigserial PRIMARY KEY,\n' +
      '  event_id text NOT NULL,\n' +
      '  aggregate text NOT NULL,\n' +
      '  aggregate_id text NOT NULL,\n' +
      '  version bigint NOT NULL,\n' +
      '  payload json NOT NULL,\n' +
      '  stored_at bigint NOT NULL,\n' +
      '  attempts integer NOT NULL DEFAULT 0,\n' +
      '  next_attempt_at bigint NOT NULL,\n' +
      '  last_error text,\n' +
      '  dead_at bigint,\n' +
      '  owner text,\n' +
      '  lease_until bigint\n' +
      ');\n' +
      `CREATE INDEX IF NOT EXISTS "${p}_pending_idx" ON ${t} (aggregate, aggregate_id, version, seq) WHERE dead_at IS NULL;\n` +
      `CREATE INDEX IF NOT EXISTS "${p}_owner_idx" ON ${t} (owner, event_id) WHERE owner IS NOT NULL;\n` +
      `CREATE INDEX IF NOT EXISTS "${p}_dead_idx" ON ${t} (dead_at, event_id) WHERE dead_at IS NOT NULL;`
    );
  }

  /** Creates the table (or, with `createTables: false`, checks it exists) before the first statement; a no-op once done. */
  async ensure(): Promise<void> {
    if (!this.schema.ready) await this.schema.ensure();
  }

  /** Every statement creating the table and its indexes, in order (for a migration). */
  statements(): string[] {
    return this.schema.statements();
  }

  /**
   * One statement of the store's. `prepared` for the short, frequent ones (a lookup by owner and
   * event id): a statement whose best plan depends on its values and on the backlog (a claim, a
   * failure, the operator's) is planned afresh each time, as PostgreSQL may otherwise settle on
   * a generic plan for a prepared one.
   */
  async query<R extends Record<string, any> = Record<string, unknown>>(
    text: string,
    values: unknown[],
    prepared = false,
  ): Promise<QueryResult<R>> {
    await this.ensure();
    // Operator calls inside a use case's transaction join it, like the repository's statements.
    const queryable = queryableFor(this.pool, 'PostgresOutboxStore');
    try {
      const statement = prepared ? preparedStatement(this.pool, text, values) : { text, values };
      return (await queryable.query(statement)) as QueryResult<R>;
    } catch (error) {
      if ((error as { code?: string }).code === '42P01') {
        throw new RepositoryConfigurationError(
          `PostgresOutboxStore: table ${this.name} does not exist. Create it in a migration (collectSchemaStatements() from @ddd-kit/core/postgres gives every table of the app, createTableStatement() this one) or let the store create it at start-up (createTables: true, the default).`,
          { cause: error },
        );
      }
      throw error;
    }
  }
}
