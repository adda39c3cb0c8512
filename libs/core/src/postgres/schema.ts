import { processWide } from '../process-wide.js';
import { activeTransactionFor, outsideTransaction } from './ambient-transaction.js';
import { runTransaction } from './run-transaction.js';
import type { PgPool, PgQueryable } from './pg.interfaces.js';
import { isServerError, unreachable } from './pool.js';
import { PgSchemaMissingError } from '../errors.js';
import {
  applyNext,
  MIGRATIONS_TABLE,
  appliedVersions,
  changedOf,
  pendingOf,
  type PgMigrationPlan,
  type PgPendingMigration,
  type PgMigration,
} from './migrations.js';

/** One table a part needs, checked after its migrations. */
export interface PgTable {
  /** The table as its statements name it: quoted, schema-qualified when configured. */
  readonly name: string;
  /** Columns its statements use: a table that lacks one is reported (CREATE IF NOT EXISTS would say nothing). */
  readonly columns?: readonly string[];
}

export interface PgSchemaOptions {
  /** Who needs the tables, for messages: `'PostgresPrepareKeyFactory'`. */
  readonly owner: string;
  /** The package and part its migrations are recorded under (default `owner`): `'@ddd-kit/prepare-key'`. */
  readonly part?: string;
  /** The tables, computed once when first needed (a bad declaration then fails there). The first names the part's instance in the record. */
  readonly tables: () => readonly PgTable[];
  /**
   * The part's migrations, numbered by place (see PgMigration): the first creates the tables
   * (`CREATE … IF NOT EXISTS`, so a database made before migrations were recorded takes it as
   * a no-op); a later release appends a step, never edits one.
   */
  readonly migrations: () => readonly PgMigration[];
  /** Apply pending migrations (default) or only check that the tables exist (a team that migrates). */
  readonly create: boolean;
  /** The error a missing table or column is reported as (default PgSchemaMissingError). */
  readonly fail?: (message: string) => Error;
}

// Duplicate table, type or catalog row: a session outside this kit (a migration tool, a
// colleague's psql) created the same table at the same moment. The attempt is made again; the
// second sees the table.
const CREATE_RACE = new Set(['23505', '42P07', '42710']);
const ATTEMPTS = 3;

/** While an application is booted to read its schema: the schemas asked for, in order, instead of any DDL. */
const collecting = processWide('pg-schema-collector', () => ({ schemas: null as PgSchema[] | null }));

/** True while collectSchemaStatements (or runSchemaCommand) boots an application to read its schema (no DDL, no lease). */
export function collectingSchema(): boolean {
  return collecting.schemas !== null;
}

/**
 * The schemas of every PostgreSQL part an application's configuration has, in the order they
 * ask: `bootstrap` starts the application (a Nest application context); meanwhile no part
 * creates, checks or queries a table — each records its schema —; `use` then runs, and the
 * application is closed.
 */
export async function withCollectedSchemas<T>(
  bootstrap: () => Promise<{ close(): Promise<void> }>,
  use: (schemas: readonly PgSchema[]) => Promise<T>,
): Promise<T> {
  if (collecting.schemas !== null) throw new Error('collectSchemaStatements is already running');
  const schemas: PgSchema[] = [];
  collecting.schemas = schemas;
  try {
    const app = await bootstrap();
    try {
      return await use(schemas);
    } finally {
      await app.close();
    }
  } finally {
    collecting.schemas = null;
  }
}

/**
 * Every statement of every migration an application's configuration needs, in the order its
 * parts ask for them (see withCollectedSchemas), for a new database; runSchemaCommand gives
 * what an existing one still lacks.
 *
 *   const ddl = await collectSchemaStatements(() => NestFactory.createApplicationContext(AppModule));
 */
export async function collectSchemaStatements(bootstrap: () => Promise<{ close(): Promise<void> }>): Promise<string[]> {
  const schemas = await withCollectedSchemas(bootstrap, async (found) => [...found]);
  const statements: string[] = [];
  for (const schema of schemas)
    for (const statement of schema.statements()) if (!statements.includes(statement)) statements.push(statement);
  return statements;
}

const COLUMNS = `SELECT attname FROM pg_attribute WHERE attrelid = to_regclass($1) AND attnum > 0 AND NOT attisdropped`;

/** A connection outside the pool: pg.Pool keeps its Client class and options for exactly that. */
interface StandaloneClient extends PgQueryable {
  connect(): Promise<unknown>;
  end(): Promise<unknown>;
  on(event: 'error', listener: (error: Error) => void): unknown;
}

/** Runs `work` in a transaction of its own (committed when it returns). */
type InTransaction = <T>(work: (client: PgQueryable) => Promise<T>) => Promise<T>;

/**
 * Runs `fn` on a connection that does not come from `pool` (a Client made from the pool's own
 * settings), each step in a transaction: DDL never waits for a pooled connection, so it cannot
 * starve behind requests that each hold one. Anything but a pg.Pool (no Client class to make
 * one with) gets one of its connections per transaction instead.
 */
async function onStandaloneConnection<T>(pool: PgPool, fn: (inTransaction: InTransaction) => Promise<T>): Promise<T> {
  const { Client, options } = pool as unknown as {
    Client?: new (options: object) => StandaloneClient;
    options?: object;
  };
  if (typeof Client !== 'function' || options === undefined) {
    return fn((work) => runTransaction(pool, undefined, (context) => work(context.guarded)));
  }
  const client = new Client(options);
  client.on('error', () => undefined); // reported by the statement in flight
  await client.connect();
  try {
    return await fn(async (work) => {
      await client.query('BEGIN');
      const result = await work(client);
      await client.query('COMMIT');
      return result;
    });
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

  /** Where the part's tables are. */
  readonly pool: PgPool;

  constructor(
    pool: PgPool,
    private readonly options: PgSchemaOptions,
  ) {
    this.pool = pool;
  }

  /** True once the tables are known to exist. */
  get ready(): boolean {
    return this.ensured;
  }

  /** The part, the table that names it and its migrations, as recorded. */
  migrationPlan(): PgMigrationPlan {
    const first = this.options.tables()[0];
    if (first === undefined) throw new Error(`${this.options.owner}: a PgSchema needs at least one table`);
    return { part: this.options.part ?? this.options.owner, target: first.name, migrations: this.options.migrations() };
  }

  /** Every statement of every migration, in order: what a new database needs. */
  statements(): string[] {
    return this.options.migrations().flatMap((migration) => [...migration.statements]);
  }

  /** The migrations the database has not recorded, and those recorded with other statements (edited since). */
  async status(): Promise<{ pending: PgPendingMigration[]; changed: number[] }> {
    const plan = this.migrationPlan();
    try {
      const applied = await outsideTransaction(() => appliedVersions(this.pool, plan));
      return { pending: pendingOf(plan, applied), changed: changedOf(plan, applied) };
    } catch (error) {
      if (isServerError(error)) throw error;
      throw unreachable(this.options.owner, this.pool, error, 'to read its migrations');
    }
  }

  /**
   * Applies pending migrations or checks the tables, once: concurrent callers share one
   * attempt; a failed attempt (the server down) is retried by the next call. Inside a
   * transaction on this pool, a schema already current is seen on that transaction's own
   * connection (no second connection).
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

  /** Applies pending migrations now, whatever the `create` option says (an explicit call is the intent). */
  async create(): Promise<void> {
    if (collecting.schemas !== null) return this.ensure();
    await this.migrate();
  }

  /** Applies pending migrations now, each in a transaction of its own with its record, and names them. */
  async migrate(): Promise<PgPendingMigration[]> {
    const applied = await this.attempt(true);
    this.ensured = true;
    return applied;
  }

  private async attempt(create: boolean): Promise<PgPendingMigration[]> {
    const ambient = activeTransactionFor(this.pool);
    if (ambient !== undefined && (await this.current(ambient.client, create))) return [];
    let reported: Error | undefined;
    const applied: PgPendingMigration[] = [];
    for (let attempt = 1; ; attempt++) {
      try {
        return await outsideTransaction(() =>
          onStandaloneConnection(this.pool, async (inTransaction) => {
            const plan = create ? this.migrationPlan() : undefined;
            while (plan !== undefined) {
              const step = await inTransaction(async (client) => {
                const next = await applyNext(client, plan);
                // Still pending once applied: its record did not stay (a rule on the table, a
                // pool that is not a PostgreSQL). Refused and rolled back, not applied for ever.
                if (next !== undefined && applied.some((done) => done.version >= next.version))
                  throw (reported = this.unrecorded(next));
                return next;
              });
              if (step === undefined) break;
              applied.push(step);
            }
            const problems = await inTransaction((client) => this.problems(client));
            if (problems.length > 0) throw (reported = this.missing(problems, create));
            return applied;
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

  /** True when nothing is missing (and, when this part migrates, no migration is pending), read on `client`. */
  private async current(client: PgQueryable, create: boolean): Promise<boolean> {
    if ((await this.problems(client)).length > 0) return false;
    if (!create) return true;
    const plan = this.migrationPlan();
    return pendingOf(plan, await appliedVersions(client, plan)).length === 0;
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

  private unrecorded(step: PgPendingMigration): Error {
    const message =
      `${this.options.owner}: migration ${step.version} (${step.name}) was applied but is still pending: ` +
      `its record in ${MIGRATIONS_TABLE} did not stay. Is the pool connected to PostgreSQL?`;
    return this.options.fail?.(message) ?? new PgSchemaMissingError(message);
  }

  private missing(problems: string[], created: boolean): Error {
    const how = created
      ? `Its migrations are recorded as applied in ${MIGRATIONS_TABLE} (part '${this.options.part ?? this.options.owner}'), so it was ` +
        "dropped or altered outside them: restore it, or delete the part's rows there to create it again; a column " +
        'the application needs comes with a migration of its own (ALTER TABLE … ADD COLUMN …).'
      : "Create it in a migration with the statements of collectSchemaStatements() (every part of the application) or of this part's schemaStatements(), or let the part create it (createTables: true):\n" +
        `${this.statements().join(';\n')};`;
    const message = `${this.options.owner}: ${problems.join('; ')}. ${how}`;
    return this.options.fail?.(message) ?? new PgSchemaMissingError(message);
  }
}
