import { createHash } from 'node:crypto';
import type { PgQueryable } from './pg.interfaces.js';

/**
 * One numbered step of a part's tables, forward only: its number is its place in the part's
 * list (the first is 1). The statements are computed from the part's configured names, so the
 * same migration serves every table name and schema. Never edit or remove one that shipped:
 * append the next (`{ name: 'available_at', statements: [`ALTER TABLE ${t} ADD COLUMN …`] }`).
 */
export interface PgMigration {
  /** A few words for `status` and the record (`'create table'`). */
  readonly name: string;
  /** Run in order, in one transaction with the record that it was applied. */
  readonly statements: readonly string[];
}

/** What is recorded of one part's migrations: the part, the table it names, the steps. */
export interface PgMigrationPlan {
  /** The package and part, as recorded: `'@ddd-kit/repository/outbox'`. */
  readonly part: string;
  /** The part's first table as its statements name it: one part may be configured with several tables. */
  readonly target: string;
  /** In order: the first is number 1. */
  readonly migrations: readonly PgMigration[];
}

/** A migration the database has not recorded: its part and table (see PgMigrationPlan), its number, the step. */
export interface PgPendingMigration extends PgMigration {
  readonly part: string;
  readonly target: string;
  readonly version: number;
}

export const MIGRATIONS_TABLE = 'ddd_kit_migrations';

/** The schema a table name is qualified with (`"s"."t"` or `s.t`), or undefined (the search path). */
function schemaOf(table: string): string | undefined {
  const match = /^("(?:[^"]|"")+"|[A-Za-z_][A-Za-z0-9_$]*)\./.exec(table);
  return match?.[1];
}

/** The record table beside the part's first table: in its schema, or on the search path as it is. */
export function migrationsTable(target: string): string {
  const schema = schemaOf(target);
  return schema === undefined ? `"${MIGRATIONS_TABLE}"` : `${schema}."${MIGRATIONS_TABLE}"`;
}

/**
 * Parts migrating one schema take turns (two instances starting at once never race a `CREATE`
 * into a duplicate catalog row, nor apply a step twice); other schemas go on meanwhile. The
 * second key is the schema's name as the server resolves it.
 */
export function lockStatement(target: string): { text: string; values: unknown[] } {
  const schema = schemaOf(target);
  return {
    text: `SELECT pg_advisory_xact_lock(hashtext('ddd-kit:schema'), hashtext(coalesce($1::text, current_schema())))`,
    values: [schema === undefined ? null : schema.replace(/^"|"$/g, '').replace(/""/g, '"')],
  };
}

export function createMigrationsTable(table: string): string {
  return (
    `CREATE TABLE IF NOT EXISTS ${table} (\n` +
    '  part text NOT NULL,\n' +
    '  target text NOT NULL,\n' +
    '  version integer NOT NULL,\n' +
    '  name text NOT NULL,\n' +
    '  checksum text NOT NULL,\n' +
    '  applied_at timestamptz NOT NULL DEFAULT now(),\n' +
    '  PRIMARY KEY (part, target, version)\n' +
    ')'
  );
}

/** Of the statements as applied: `status` tells a step edited after it shipped. */
export function checksum(statements: readonly string[]): string {
  return createHash('sha256').update(statements.join('\n;\n')).digest('hex').slice(0, 16);
}

export function recordStatement(table: string): string {
  return `INSERT INTO ${table} (part, target, version, name, checksum) VALUES ($1, $2, $3, $4, $5)`;
}

/** Every recorded version of the part with its checksum; none when the record table does not exist. */
export async function appliedVersions(client: PgQueryable, plan: PgMigrationPlan): Promise<Map<number, string>> {
  const table = migrationsTable(plan.target);
  const exists = await client.query('SELECT to_regclass($1) IS NOT NULL AS present', [table]);
  if (!exists.rows[0]?.present) return new Map();
  const found = await client.query(`SELECT version, checksum FROM ${table} WHERE part = $1 AND target = $2`, [
    plan.part,
    plan.target,
  ]);
  return new Map(found.rows.map((row: { version: number; checksum: string }) => [row.version, row.checksum]));
}

/** The part's steps the database has not recorded, in order. */
export function pendingOf(plan: PgMigrationPlan, applied: ReadonlyMap<number, string>): PgPendingMigration[] {
  return plan.migrations.flatMap((migration, i) =>
    applied.has(i + 1) ? [] : [{ part: plan.part, target: plan.target, version: i + 1, ...migration }],
  );
}

/** Steps recorded with other statements than this code's (edited after they shipped): for `status`. */
export function changedOf(plan: PgMigrationPlan, applied: ReadonlyMap<number, string>): number[] {
  return plan.migrations.flatMap((migration, i) => {
    const recorded = applied.get(i + 1);
    return recorded !== undefined && recorded !== checksum(migration.statements) ? [i + 1] : [];
  });
}

/**
 * Applies the part's first pending step, under the lock, in the caller's transaction (with its
 * record), and names it: undefined when none was pending. The record is read under the lock, so a step another
 * instance applied meanwhile is seen and not run again.
 */
export async function applyNext(client: PgQueryable, plan: PgMigrationPlan): Promise<PgPendingMigration | undefined> {
  const table = migrationsTable(plan.target);
  await client.query(lockStatement(plan.target));
  await client.query(createMigrationsTable(table));
  const next = pendingOf(plan, await appliedVersions(client, plan))[0];
  if (next === undefined) return undefined;
  for (const statement of next.statements) await client.query(statement);
  await client.query(recordStatement(table), [
    plan.part,
    plan.target,
    next.version,
    next.name,
    checksum(next.statements),
  ]);
  return next;
}

const literal = (value: string | number): string =>
  typeof value === 'number' ? String(value) : `'${value.replace(/'/g, "''")}'`;

/** The pending steps as a script: what `up` would run, each step a transaction with its record. */
export function pendingSql(pending: readonly PgPendingMigration[]): string {
  const blocks: string[] = [];
  for (const step of pending) {
    const table = migrationsTable(step.target);
    const lock = lockStatement(step.target);
    const values = [step.part, step.target, step.version, step.name, checksum(step.statements)];
    blocks.push(
      `-- ${step.part} ${step.target} #${step.version}: ${step.name}\n` +
        [
          'BEGIN',
          lock.text.replace('$1::text', lock.values[0] === null ? 'NULL' : literal(lock.values[0] as string)),
          createMigrationsTable(table),
          ...step.statements.map((s) => s.trim().replace(/;$/, '')),
          `INSERT INTO ${table} (part, target, version, name, checksum) VALUES (${values.map(literal).join(', ')})`,
          'COMMIT',
        ].join(';\n') +
        ';',
    );
  }
  return blocks.join('\n\n');
}
