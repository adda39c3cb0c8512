import { PrepareKey } from '../../prepare-key.js';
import type { RecordPage, RollbackCondition, StoredRecord } from '../../prepare-key.interfaces.js';
import type { ServerClock } from '../../server-clock.js';
import { queryableFor, type PgQueryable } from '@ddd-kit/core/postgres';
import type { PrepareKeyStatements } from './postgres-prepare-key.sql.js';

/** What every key of one PostgresPrepareKeyFactory shares. */
export interface PostgresPrepareKeyContext {
  pool: PgQueryable;
  statements: PrepareKeyStatements;
  /** Resolves once the table exists (created on first use unless told not to). */
  ready: () => Promise<void>;
  dropAt: (ttlAt: number) => number | null;
  clock: ServerClock;
}

/**
 * A PrepareKey on PostgreSQL: each primitive is one statement on the row (name, key), atomic on
 * the server; `prepare` is an `INSERT … ON CONFLICT DO UPDATE … WHERE` the held record expired,
 * so of two writers (or two transactions) one gets the row and the other sees it held. Inside
 * an ambient transaction (see pg-ambient-transaction.ts) every statement joins it, so a
 * reservation commits or rolls back with the use case; outside one it autocommits.
 */
export class PostgresPrepareKey<V = unknown> extends PrepareKey<V> {
  /** The name as stored (escaped, see textKey). */
  private readonly storedName: string;

  constructor(
    readonly name: string,
    private readonly context: PostgresPrepareKeyContext,
  ) {
    super();
    this.storedName = escapeText(name);
  }

  override get transactionScope(): object {
    return this.context.pool;
  }

  protected override now(): number {
    return this.context.clock.now();
  }

  protected async doPrepare(key: string, value: string, ttlAt: number, op: string): Promise<boolean> {
    const { statements, dropAt } = this.context;
    return this.changed(statements.prepare, [this.storedName, textKey(key), value, ttlAt, op, dropAt(ttlAt)]);
  }

  protected async doGetValue(key: string): Promise<StoredRecord | undefined> {
    await this.context.ready();
    const { rows } = await this.queryable().query(this.context.statements.read, [this.storedName, textKey(key)]);
    const row = rows[0] as { now: string; value: string | null; ttl_at: string | null };
    this.context.clock.observe(Number(row.now));
    return row.value === null ? undefined : { value: row.value, ttlAt: Number(row.ttl_at) };
  }

  /** One statement for the whole batch (`key = ANY($2)`), not one per key. */
  protected override async doGetValues(keys: readonly string[]): Promise<Array<StoredRecord | undefined>> {
    await this.context.ready();
    const stored = keys.map(textKey);
    const { rows } = await this.queryable().query(this.context.statements.readMany, [this.storedName, stored]);
    const found = rows as Array<{ now: string; key: string | null; value: string; ttl_at: string }>;
    this.context.clock.observe(Number(found[0].now));
    const byKey = new Map<string, StoredRecord>();
    for (const row of found) if (row.key !== null) byKey.set(row.key, { value: row.value, ttlAt: Number(row.ttl_at) });
    return stored.map((key) => byKey.get(key));
  }

  protected async doRollback(key: string, op: string, condition?: RollbackCondition): Promise<boolean> {
    const { statements } = this.context;
    if (condition === undefined) return this.changed(statements.rollback, [this.storedName, textKey(key), op]);
    if (condition.value !== undefined)
      return this.changed(statements.rollbackIfValue, [this.storedName, textKey(key), op, condition.value]);
    return this.changed(statements.rollbackIfOp, [this.storedName, textKey(key), op, condition.op]);
  }

  protected async doReprepare(
    key: string,
    value: string,
    ttlAt: number,
    op: string,
    expected?: string,
  ): Promise<boolean> {
    const { statements, dropAt } = this.context;
    const values = [this.storedName, textKey(key), value, ttlAt, op, dropAt(ttlAt)];
    if (expected === undefined) return this.changed(statements.reprepare, values);
    return this.changed(statements.reprepareIfValue, [...values, expected]);
  }

  protected async doListPage(cursor: string | undefined, pageSize: number): Promise<RecordPage> {
    await this.context.ready();
    const { rows } = await this.queryable().query(this.context.statements.page, [
      this.storedName,
      cursor ?? null,
      pageSize,
    ]);
    const page = rows as Array<{ key: string; value: string; ttl_at: string }>;
    const records = page.map((r) => ({ key: unescapeText(r.key), value: r.value, ttlAt: Number(r.ttl_at) }));
    // The cursor is the stored (escaped) key, which is what the statement compares.
    return { records, next: page.length === pageSize ? page[page.length - 1].key : undefined };
  }

  /** The ambient transaction's client on this pool, else the pool (see @ddd-kit/core/postgres). */
  private queryable(): PgQueryable {
    return queryableFor(this.context.pool, `PostgresPrepareKey '${this.name}'`);
  }

  /** Runs a statement that returns a row when it changed one. */
  private async changed(sql: string, values: unknown[]): Promise<boolean> {
    await this.context.ready();
    const { rowCount } = await this.queryable().query(sql, values);
    return rowCount === 1;
  }
}

/**
 * Keys reach the primitives validated; this is the last guard before one becomes a parameter.
 * PostgreSQL text cannot hold NUL, which a key may: `\` and NUL are escaped (`\\`, `\0`),
 * which keeps distinct keys distinct.
 */
function textKey(key: string): string {
  if (typeof key !== 'string') throw new TypeError('a record key must be a string');
  return escapeText(key);
}

function escapeText(text: string): string {
  return /[\\\0]/.test(text) ? text.replace(/[\\\0]/g, (c) => (c === '\\' ? '\\\\' : '\\0')) : text;
}

function unescapeText(text: string): string {
  return text.includes('\\') ? text.replace(/\\([\\0])/g, (_, c: string) => (c === '0' ? '\0' : c)) : text;
}
