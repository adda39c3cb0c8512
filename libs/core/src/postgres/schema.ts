import { processWide } from '../process-wide.js';
import { activeTransactionFor, outsideTransaction } from './ambient-transaction.js';
import { runTransaction } from './run-transaction.js';
import type { PgPool, PgQueryable } from './pg.interfaces.js';
import { isServerError, unreachable } from './pool.js';
import { PgSchemaMissingError } from '../errors.js';

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
  /** The error a missing table or column is reported as (default PgSchemaMissingError). */
  readonly fail?: (message: string) => Error;
}

// Duplicate table, type or catalog row: a session outside this kit (a migration tool, a
// colleague's psql) created the same table at the same moment. The attempt is made again; the
// second sees the table.
const CREATE_RACE = new Set(['23505', '42P07', '42710']);
const ATTEMPTS = 3;

/** While collectSchemaStatements runs: the schemas asked for, in order, instead of any DDL. */
const collecting = processWide('pg-schema-collector', () => ({ schemas: null as PgSchema[] | null }));

/** True while collectSchemaStatements boots an application to read its schema (no DDL, no lease). */
export function collectingSchema(): boolean {
  return collecting.schemas !== null;
}

/**
 * Every statement creating the tables an application's configuration needs, in the order its
 * parts ask for them, for a migration: `bootstrap` starts the application (a Nest application
 * context); meanwhile no part creates, checks or queries a table — each records its DDL —, and
 * then the application is closed. The statements are idempotent (`IF NOT EXISTS`).
 *
 *   const ddl = await collectSchemaStatements(() => NestFactory.createApplicationContext(AppModule));
 */
export async function collectSchemaStatements(bootstrap: () => Promise<{ close(): Promise<void> }>): Promise<string[]> {
  if (collecting.schemas !== null) throw new Error('collectSchemaStatements is already running');
  const schemas: PgSchema[] = [];
  collecting.schemas = schemas;
  try {
    const app = await bootstrap();
    await app.close();
  } finally {
    collecting.schemas = null;
  }
  const statements: string[] = [];
  for (const schema of schemas)
    for (const statement of schema.statements()) if (!statements.includes(statement)) statements.push(statement);
  return statements;
}

// Every part creates its tables under this lock: two instances starting at once never race
// `CREATE TABLE IF NOT EXISTS` into a duplicate-catalog-row error, whichever part they start.
const SCHEMA_LOCK = `SELECT pg_advisory_xact_lock(hashtext('ddd-kit:schema'))`;
const COLUMNS = `SELECT attname FROM pg_attribute WHERE attrelid = to_regclass($1) AND attnum > 0 AND NOT attisdropped`;

/** A connection outside the pool: pg.Pool keeps its Client class and options for exactly that. */
interface StandaloneClient extends PgQueryable {
  connect(): Promise<unknown>;
  end(): Promise<unknown>;
  on(event: 'error', listener: (error: Error) => void): unknown;
}

/**
 * Runs `fn` in a transaction on a connection that does not come from `pool` (a Client made from
 * the pool's own settings): DDL never waits for a pooled connection, so it cannot starve behind
 * requests that each hold one. Anything but a pg.Pool (no Client class to make one with) gets
 * one of its connections instead.
 */
async function onStandaloneConnection(pool: PgPool, fn: (client: PgQueryable) => Promise<void>): Promise<void> {
  const { Client, options } = pool as unknown as {
    Client?: new (options: object) => StandaloneClient;
    options?: object;
  };
  if (typeof Client !== 'function' || options === undefined) {
    return runTransaction(pool, undefined, (context) => fn(context.guarded));
  }
  const client = new Client(options);
  client.on('error', () => undefined); // reported by the statement in flight
  await client.connect();
  try {
    await client.query('BEGIN');
    await fn(client);
    await client.query('COMMIT');
  } finally {
    // Closing rolls back whatever did not commit.
    await client.end().catch(() => undefined);
  }
}

/**
 * The tables of one PostgreSQL part, created (or checked) once per process before the part's
 * first statement, never as part of a use case's transaction (a rollback must not take a table
 * away) and never on a pooled connection (a burst of first requests, each holding one
 * connection in its transaction, would otherwise wait for ever for another). The modules
 * ensure their parts' schemas at bootstrap; a part built by hand does it on first use.
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
   * (the server down) is retried by the next call. Inside a transaction on this pool, tables
   * that already exist are seen on that transaction's own connection (no second connection).
   */
  ensure(): Promise<void> {
    if (collecting.schemas !== null) {
      if (!collecting.schemas.includes(this)) collecting.schemas.push(this);
      return Promise.resolve();
    }
    if (this.ensured) return Promise.resolve();
    this.pending ??= this.attempt(this.options.create).then(
      () => void (this.ensured = true),
      (error: unknown) => {
        this.pending = undefined;
        throw error;
      },
    );
    return this.pending;
  }

  /** Creates the tables now, whatever the `create` option says (an explicit call is the intent). */
  async create(): Promise<void> {
    if (collecting.schemas !== null) return this.ensure();
    await this.attempt(true);
    this.ensured = true;
  }

  private async attempt(create: boolean): Promise<void> {
    const ambient = activeTransactionFor(this.pool);
    if (ambient !== undefined && (await this.problems(ambient.client)).length === 0) return;
    let reported: Error | undefined;
    for (let attempt = 1; ; attempt++) {
      try {
        return await outsideTransaction(() =>
          onStandaloneConnection(this.pool, async (client) => {
            if (create) {
              await client.query(SCHEMA_LOCK);
              for (const statement of this.statements()) await client.query(statement);
            }
            const problems = await this.problems(client);
            if (problems.length > 0) throw (reported = this.missing(problems, create));
          }),
        );
      } catch (error) {
        if (attempt < ATTEMPTS && CREATE_RACE.has((error as { code?: string }).code ?? '')) continue;
        // What is missing, or the server's own refusal, as it is; a server that did not answer, named.
        if (error === reported || isServerError(error)) throw error;
        throw unreachable(this.options.owner, this.pool, error, 'to create or check its tables');
      }
    }
  }

  /** Every missing table or column, as a message names it. */
  private async problems(client: PgQueryable): Promise<string[]> {
    const problems: string[] = [];
    for (const table of this.options.tables()) {
      const present = await client.query('SELECT to_regclass($1) IS NOT NULL AS present', [table.name]);
      if (!present.rows[0]?.present) {
        problems.push(`table ${table.name} does not exist`);
        continue;
      }
      const found = await client.query(COLUMNS, [table.name]);
      const columns = new Set(found.rows.map((row: { attname: string }) => row.attname));
      const missing = (table.columns ?? []).filter((column) => !columns.has(column));
      if (missing.length > 0)
        problems.push(`table ${table.name} has no column ${missing.map((c) => `"${c}"`).join(', ')}`);
    }
    return problems;
  }

  private missing(problems: string[], created: boolean): Error {
    const how = created
      ? 'It was created earlier with other columns: migrate it (ALTER TABLE … ADD COLUMN …).'
      : "Create it in a migration with the statements of collectSchemaStatements() (every part of the application) or of this part's schemaStatements(), or let the part create it (createTables: true):\n" +
        `${this.statements().join(';\n')};`;
    const message = `${this.options.owner}: ${problems.join('; ')}. ${how}`;
    return this.options.fail?.(message) ?? new PgSchemaMissingError(message);
  }
}
