import {
  guardPool,
  activeTransactionFor,
  usePreparedStatements,
  type PgResult,
  type QueryableOptions,
} from '@ddd-kit/core/postgres';
import type { Pool, QueryResult } from 'pg';
import type { AggregateRoot } from '../../aggregate/aggregate-root.js';
import type { AggregateId } from '../../aggregate/aggregate.interfaces.js';
import type { DataSyncEvent } from '../../data-sync/data-sync-event.js';
import { PostgresOutboxStore } from './postgres-outbox.store.js';
import type { OutboxStore } from '../../outbox/outbox.interfaces.js';
import { AbstractRepository } from '../../repository/abstract-repository.js';
import { declareFeatureOption } from '../../storages/feature-option.storage.js';
import type { AggregatePage, LoadedAggregate } from '../../repository/repository.interfaces.js';
import type {
  PostgresColumns,
  PostgresIdType,
  PostgresRepositoryStatements as Statements,
  PostgresStatement,
  PostgresWriteOperation,
  StoredRow,
} from './postgres-repository.statements.js';
import {
  checkPostgresRepositoryOptions,
  missingPoolError,
  type PostgresRepositoryOptions,
} from './postgres-repository.options.js';
import { matched, NO_STATEMENTS, PostgresStatementRunner } from './postgres-repository.execution.js';
import { joinsPostgresWrites, writeWithEvents, type PostgresWriteJoiningOutbox } from './postgres-repository.outbox.js';
import { PostgresRowCodec, type PostgresRowMapping } from './postgres-repository.rows.js';
import { PostgresRepositoryTable, type PostgresTableSource } from './postgres-repository.table.js';

export type { PostgresRepositoryOptions } from './postgres-repository.options.js';

/**
 * Aggregates as rows `(id, version, ...columns)` of one PostgreSQL table, through node-postgres.
 * A subclass declares the table and its columns and maps the rest (`toRow`, `toAggregate`);
 * the id column, the version column, the conditional writes, deletes and `currentVersion`
 * belong to this class.
 *
 * Each operation is one statement, every value a parameter:
 *   insert         INSERT INTO t (id, version, c…) VALUES ($1, $2, $3…) ON CONFLICT (id) DO NOTHING
 *                                              no row inserted → DuplicateAggregateError
 *   update         UPDATE t SET c… = $3…, version = $n WHERE id = $1 AND version = $2
 *                                              no row updated → OptimisticLockError
 *   remove         DELETE FROM t WHERE id = $1 AND version = $2
 *                                              no row deleted → OptimisticLockError
 *   findById       SELECT id, version, c… FROM t WHERE id = $1            no row → null
 *   currentVersion SELECT version FROM t WHERE id = $1                     no row → -1
 *   findByIds      SELECT id, version, c… FROM t WHERE id = ANY($1)       (reconciliation's pages)
 * `ON CONFLICT (id)` makes a taken id a zero-row insert rather than an error: it says exactly
 * "this id" (not any other unique index), and it leaves an enclosing transaction usable.
 *
 * Transactions: every statement runs on the client of the ambient transaction started from
 * this repository's pool (`@Transactional()` with `@ddd-kit/transactional-adapter-pg`, or its
 * `runInTransaction`) when there is one, else on the pool, autocommitted. A write runs through
 * `write`, with whatever `statementsToCommitWith` adds; only when there is more than the one
 * statement and no ambient transaction does it open a short transaction of its own. Statements
 * go out through postgres-repository.execution.ts: `query` reads, `write` writes.
 *
 * Identifiers (table, schema, columns) are checked and quoted; ids are checked to be strings
 * (`text` ids) or safe integers (`bigint` ids) before anything is sent.
 */
export abstract class PostgresRepository<
  ID extends AggregateId,
  T extends AggregateRoot<ID, any>,
  Row extends object = Record<string, unknown>,
> extends AbstractRepository<ID, T> {
  /** The table: `name` or `schema.name` (quoted as written, so keep to lower case unless the table has capitals). */
  protected abstract readonly table: string;
  /** Every column of the row but id and version, with its SQL type: `{ label: 'text NOT NULL', tags: 'jsonb' }`. */
  protected abstract readonly columns: PostgresColumns<Row>;

  static {
    declareFeatureOption(this, 'table');
  }

  // Set through `configure` (from the constructor or the backend), so these fields have no
  // initialisers: with useDefineForClassFields off an initialiser would run after the base
  // constructor and wipe what it configured.
  private pool?: Pool;
  private tableOverride?: string;
  private createTableOnFirstUse?: boolean;
  /** `foreignTransaction`, as queryableFor takes it. */
  private queryableOptions?: QueryableOptions;
  // Made once (`#`: names no subclass can clash with). They read the subclass's declaration and
  // mapping only when used: its getters may be overridden, and its fields exist only once the
  // constructors have run.
  readonly #declared: PostgresTableSource & PostgresRowMapping<ID, T, Row> = {
    owner: this.constructor.name,
    declaration: () => ({
      where: this.constructor.name,
      table: this.tableOverride ?? this.table,
      idColumn: this.idColumn,
      versionColumn: this.versionColumn,
      idType: this.idType,
      columns: this.columns as Record<string, unknown> | undefined,
    }),
    pool: () => this.requirePool(),
    mayCreate: () => this.createTableOnFirstUse !== false,
    idType: () => this.idType,
    versionColumn: () => this.versionColumn,
    aggregateName: () => this.aggregateName(),
    toRow: (aggregate) => this.toRow(aggregate),
    toAggregate: (row) => this.toAggregate(row),
  };
  /** The table's statements and the schema step before the first one. */
  readonly #table = new PostgresRepositoryTable(this.#declared);
  /** Binds aggregates and reads rows back. */
  readonly #rows = new PostgresRowCodec<ID, T, Row>(this.#declared);
  /** Where the statements run; a driver error becomes what it stands for (a missing table: see PostgresRepositoryTable.explain). */
  readonly #statements = new PostgresStatementRunner(
    this.#declared.owner,
    this.#declared.pool,
    () => this.queryableOptions,
    (error) => {
      throw this.#table.explain(error);
    },
  );

  constructor(options: PostgresRepositoryOptions<T> = {}) {
    super(options);
  }

  /** Also takes the `pool`, `table` and `createTables` (each set once: a later value is ignored), and the pool's `preparedStatements`. */
  override configure(options: PostgresRepositoryOptions<T>): void {
    super.configure(options);
    checkPostgresRepositoryOptions(this.constructor.name, options);
    if (options.pool !== undefined && options.pool !== null) this.pool ??= guardPool(options.pool);
    if (options.preparedStatements !== undefined) usePreparedStatements(options.pool!, options.preparedStatements);
    if (options.table !== undefined) this.tableOverride ??= options.table;
    if (options.foreignTransaction !== undefined)
      this.queryableOptions ??= { foreignTransaction: options.foreignTransaction };
    if (options.createTables !== undefined) this.createTableOnFirstUse ??= options.createTables;
  }

  /** True once a pool is configured. */
  get hasPool(): boolean {
    return this.pool !== undefined;
  }

  /** A pool is configured, and the table and column declaration is valid (the DDL builds). */
  override checkConfiguration(): void {
    if (this.pool === undefined) throw missingPoolError(this.constructor.name, 'module');
    this.createTableStatement();
  }

  /** True when `pool` is the one this repository runs on. */
  usesPool(pool: Pool): boolean {
    return this.pool === pool;
  }

  /** The column holding the id. Override (as a getter) to use another. */
  protected get idColumn(): string {
    return 'id';
  }

  /** The column holding the version. Override (as a getter) to use another. */
  protected get versionColumn(): string {
    return 'version';
  }

  /** How ids are stored: `text` (string ids, the default) or `bigint` (numeric ids). Override as a getter. */
  protected get idType(): PostgresIdType {
    return 'text';
  }

  /** The columns to store, every declared column and nothing else (id and version are this class's). */
  protected abstract toRow(aggregate: T): Row;

  /** The aggregate rebuilt from a stored row (`id` and `version` included). */
  protected abstract toAggregate(row: StoredRow<ID, Row>): T;

  /**
   * Statements that must commit together with the aggregate's write (an outbox row per event,
   * a unique key's reservation). They run after the write, on the same transaction, and only
   * when the write matched; none by default. `events` are the data-sync events of this write.
   */
  protected statementsToCommitWith(
    _aggregate: T,
    _operation: PostgresWriteOperation,
    _events: readonly DataSyncEvent[],
  ): readonly PostgresStatement[] {
    return NO_STATEMENTS;
  }

  /**
   * The table's DDL, for teams that migrate by hand (and what first use runs when it may create
   * the table). Also checks the subclass's declaration, so calling it fails fast on a bad one.
   */
  createTableStatement(): string {
    return this.#table.statements().createTable;
  }

  /** Creates the table now when it is missing, whatever `createTables` says; a no-op once done. */
  async ensureTable(): Promise<void> {
    await this.#table.schemaStep().create();
  }

  /**
   * What the module runs at bootstrap: creates the table when missing, or — with
   * `createTables: false` — checks that it and every declared column exist, failing with what to run.
   */
  async ensureSchema(): Promise<void> {
    await this.ready();
  }

  /** Every statement creating what this repository needs, in order (for a migration). */
  schemaStatements(): string[] {
    return this.#table.schemaStep().statements();
  }

  // ---------------------------------------------------------------- AbstractRepository steps

  // Not `async`: the row count is checked in the step that receives the statement's result.
  protected doInsert(aggregate: T, events: readonly DataSyncEvent[] = []): Promise<void> {
    return this.writeRow('insert', aggregate, events, (result) => {
      if (result.rowCount === 0) throw this.duplicate(aggregate);
    });
  }

  protected doUpdate(aggregate: T, events: readonly DataSyncEvent[] = []): Promise<void> {
    return this.writeRow('update', aggregate, events, (result) => {
      if (result.rowCount === 0) throw this.conflict(aggregate);
    });
  }

  protected doRemove(aggregate: T, events: readonly DataSyncEvent[] = []): Promise<void> {
    return this.writeRow('remove', aggregate, events, (result) => {
      if (result.rowCount === 0) throw this.conflict(aggregate);
    });
  }

  /**
   * The operation's conditional statement, with its events (the outbox) and what commits with
   * it; resolves what `settle` makes of its result (a row count of 0: it matched nothing). Not
   * `async` on the common path (statements ready, no events to store): no promise step beside
   * the statement's own.
   */
  private writeRow(
    operation: PostgresWriteOperation,
    aggregate: T,
    events: readonly DataSyncEvent[],
    settle: (result: PgResult) => void,
  ): Promise<void> {
    try {
      const id = this.#rows.id(aggregate.id);
      const s = this.#table.ready;
      if (s === undefined) return this.ready().then(() => this.writeRow(operation, aggregate, events, settle));
      const values = this.#rows.values(operation, id, aggregate, s);
      const outbox = this.outbox as PostgresWriteJoiningOutbox | undefined;
      const alongside = this.statementsToCommitWith(aggregate, operation, events);
      if (outbox === undefined || events.length === 0)
        return this.#statements.write(this.#statements.prepared(s[operation], values), alongside, settle);
      const write = { text: s[operation], values };
      return writeWithEvents(
        outbox,
        this.#statements,
        this.requirePool(),
        this.#declared.owner,
        write,
        events,
        alongside,
        settle,
      );
    } catch (error) {
      return Promise.reject(error);
    }
  }

  // Not `async` once the statements are ready (every load but the first): one promise step on
  // top of the driver's rather than a frame and an await of its own.
  protected override doFindById(id: ID): Promise<LoadedAggregate<T> | null> {
    try {
      this.#rows.id(id);
      const s = this.#table.ready;
      if (s === undefined) return this.ready().then(() => this.doFindById(id));
      return this.#statements.query<Record<string, unknown>, LoadedAggregate<T> | null>(
        this.#statements.prepared(s.find, [id]),
        (result) => (result.rows.length === 0 ? null : this.#rows.loaded(result.rows[0], id)),
      );
    } catch (error) {
      return Promise.reject(error);
    }
  }

  protected override async doFindByIds(ids: readonly ID[]): Promise<Array<LoadedAggregate<T> | null>> {
    const s = this.#table.ready ?? (await this.ready());
    const statement = this.#statements.prepared(s.findMany, [this.#rows.bindable(ids)]);
    return this.#statements.query<Record<string, unknown>, LoadedAggregate<T>[]>(statement, (result) =>
      result.rows.map((row) => this.#rows.loaded(row, row.id as ID)),
    );
  }

  protected override async doListPage(cursor: ID | undefined, pageSize: number): Promise<AggregatePage<ID, T>> {
    const s = this.#table.ready ?? (await this.ready());
    const statement =
      cursor === undefined
        ? this.#statements.prepared(s.firstPage, [pageSize])
        : this.#statements.prepared(s.nextPage, [this.#rows.id(cursor), pageSize]);
    const aggregates = await this.#statements.query<Record<string, unknown>, LoadedAggregate<T>[]>(
      statement,
      (result) => result.rows.map((row) => this.#rows.loaded(row, row.id as ID)),
    );
    return {
      aggregates,
      next: aggregates.length === pageSize ? aggregates[aggregates.length - 1].aggregate.id : undefined,
    };
  }

  /**
   * A write with what must commit with it (unique-key reservations on this pool) in one
   * transaction: the enclosing one when there is one on this pool, else one opened here —
   * BEGIN, the work, COMMIT (ROLLBACK when it throws), with callbacks registered for after the
   * commit (the data-sync events) run once it committed.
   */
  protected override async inUnitOfWork<R>(work: () => Promise<R>): Promise<R> {
    return this.#statements.inUnitOfWork(work);
  }

  protected override acceptsOutbox(outbox: OutboxStore): boolean {
    return outbox instanceof PostgresOutboxStore || joinsPostgresWrites(outbox);
  }

  /** Reservations on this pool (PostgresPrepareKeyFactory given the same pool) commit with the write. */
  protected override get transactionScope(): object | undefined {
    return this.pool;
  }

  protected override async doCurrentVersion(id: ID): Promise<number> {
    this.#rows.id(id);
    const s = this.#table.ready ?? (await this.ready());
    return this.#statements.query<{ version: unknown }, number>(this.#statements.prepared(s.version, [id]), (result) =>
      result.rows.length === 0 ? -1 : this.#rows.version(result.rows[0].version, id),
    );
  }

  /** In an ambient transaction offering `afterCommit`, the events wait for its commit (a rollback drops them). */
  protected override whenWriteCommits(publish: () => Promise<void>): Promise<void> {
    const transaction = this.pool === undefined ? undefined : activeTransactionFor(this.pool);
    if (transaction?.afterCommit === undefined) return publish();
    transaction.afterCommit(publish);
    return Promise.resolve();
  }

  // ---------------------------------------------------------------- for subclasses

  /** The table as this repository's statements name it (checked, quoted, schema-qualified if so configured), for the subclass's own queries. */
  protected get qualifiedTable(): string {
    return this.#table.statements().table;
  }

  /**
   * Runs one statement where this repository's statements run: on the ambient transaction's
   * client when there is one started from this pool, else on the pool (autocommit). For the
   * subclass's own queries (a lookup by another column, say); values are always parameters.
   */
  protected async query<R extends Record<string, any> = Record<string, unknown>>(
    statement: PostgresStatement,
  ): Promise<QueryResult<R>> {
    return (await this.#statements
      .queryable()
      .query(statement.text, statement.values as unknown[] | undefined)) as QueryResult<R>;
  }

  /**
   * Runs the aggregate's conditional statement and, only when it matched a row, the statements
   * that must commit with it; returns whether it matched. In an ambient transaction all of them
   * run on its client and commit (or roll back) with it. Without one, a lone statement is
   * autocommitted, and several run in a transaction opened here: BEGIN, the write, the others,
   * COMMIT — or ROLLBACK when the write matched nothing or anything failed, so the others never
   * outlive a write that did not happen.
   *
   * An error means the outcome is unknown only when the connection failed at COMMIT (or, for a
   * lone autocommitted statement, while the statement was in flight): the write may have
   * committed. Any other error means nothing was written.
   */
  protected async write(
    statement: PostgresStatement,
    alongside: readonly PostgresStatement[] = NO_STATEMENTS,
  ): Promise<boolean> {
    return this.#statements.write(statement, alongside, matched);
  }

  // ---------------------------------------------------------------- internals

  /** The statements, after the table exists (created, or checked, once before the first statement). */
  private ready(): Promise<Statements> {
    return this.#table.ensure();
  }

  private requirePool(): Pool {
    if (this.pool === undefined) throw missingPoolError(this.constructor.name, 'repository');
    return this.pool;
  }
}
