import type { AggregateId } from '../../aggregate/aggregate.interfaces.js';
import { RepositoryConfigurationError } from '../../errors.js';
import { checkColumnType, isJsonType, quoteIdentifier, quoteTableName } from './postgres-sql.utils.js';

// The SQL of PostgresRepository, built once from a subclass's declaration: every identifier
// checked and quoted, every value a `$n` parameter.

/**
 * One SQL statement: text with `$n` placeholders, and the values bound to them. With a `name`
 * it is a prepared statement, parsed and planned once per connection (see preparedStatement in
 * @ddd-kit/core/postgres); the repository names its own, never a subclass's.
 */
export interface PostgresStatement {
  readonly name?: string;
  readonly text: string;
  readonly values?: readonly unknown[];
}

/** The write a statement belongs to. */
export type PostgresWriteOperation = 'insert' | 'update' | 'remove';

/** The subclass's columns (every key of its row) and their SQL types, as `CREATE TABLE` declares them. */
export type PostgresColumns<Row> = { readonly [K in keyof Row]-?: string };

/** A row as `toAggregate` receives it: the subclass's columns plus `id` and `version`. */
export type StoredRow<ID extends AggregateId, Row> = Row & { id: ID; version: number };

/** How ids are stored: `text` holds string ids, `bigint` holds safe-integer numeric ids. */
export type PostgresIdType = 'text' | 'bigint';

/** Every statement of one repository, and what binding values needs. */
export interface PostgresRepositoryStatements {
  table: string;
  columns: string[];
  jsonColumns: Set<string>;
  createTable: string;
  insert: string;
  update: string;
  remove: string;
  find: string;
  /** $1 an array of ids: every row among them (reconciliation loads a page of owners at once). */
  findMany: string;
  firstPage: string;
  nextPage: string;
  version: string;
}

/** What a subclass declares. */
export interface PostgresDeclaration {
  /** The class, for messages. */
  where: string;
  table: unknown;
  idColumn: string;
  versionColumn: string;
  idType: PostgresIdType;
  columns: Record<string, unknown> | undefined;
}

/** The statements of a declaration; a declaration that cannot work is a RepositoryConfigurationError. */
export function buildStatements(d: PostgresDeclaration): PostgresRepositoryStatements {
  const { where, idType } = d;
  const table = quoteTableName(d.table, `${where}: table`);
  const id = quoteIdentifier(d.idColumn, `${where}: idColumn`);
  const version = quoteIdentifier(d.versionColumn, `${where}: versionColumn`);
  if (d.idColumn === d.versionColumn)
    throw new RepositoryConfigurationError(`${where}: idColumn and versionColumn must differ`);
  if (idType !== 'text' && idType !== 'bigint')
    throw new RepositoryConfigurationError(
      `${where}: idType must be 'text' or 'bigint', got ${JSON.stringify(idType)}`,
    );

  const declared = d.columns;
  if (declared === null || typeof declared !== 'object' || Array.isArray(declared)) {
    throw new RepositoryConfigurationError(
      `${where}: columns must be an object of column name → SQL type, such as { label: 'text NOT NULL' }`,
    );
  }
  const columns = Object.keys(declared);
  const jsonColumns = new Set<string>();
  const definitions: string[] = [];
  for (const column of columns) {
    const quoted = quoteIdentifier(column, `${where}: column`);
    if ([d.idColumn, d.versionColumn, 'id', 'version'].includes(column)) {
      throw new RepositoryConfigurationError(
        `${where}: column ${quoted} is reserved: the repository writes the id and version columns itself`,
      );
    }
    const type = checkColumnType(declared[column], `${where}: the type of column ${quoted}`);
    if (isJsonType(type)) jsonColumns.add(column);
    definitions.push(`${quoted} ${type}`);
  }

  const all = [id, version, ...columns.map((c) => `"${c}"`)];
  const assignments = columns.map((c, i) => `"${c}" = $${i + 3}`);
  assignments.push(`${version} = $${columns.length + 3}`);
  const selected = [`${id} AS "id"`, `${version} AS "version"`, ...columns.map((c) => `"${c}"`)];
  return {
    table,
    columns,
    jsonColumns,
    createTable:
      `CREATE TABLE IF NOT EXISTS ${table} (\n` +
      [
        `  ${id} ${idType} PRIMARY KEY`,
        `  ${version} bigint NOT NULL CHECK (${version} >= 1)`,
        ...definitions.map((definition) => `  ${definition}`),
      ].join(',\n') +
      '\n)',
    insert: `INSERT INTO ${table} (${all.join(', ')}) VALUES (${all.map((_, i) => `$${i + 1}`).join(', ')}) ON CONFLICT (${id}) DO NOTHING`,
    update: `UPDATE ${table} SET ${assignments.join(', ')} WHERE ${id} = $1 AND ${version} = $2`,
    remove: `DELETE FROM ${table} WHERE ${id} = $1 AND ${version} = $2`,
    find: `SELECT ${selected.join(', ')} FROM ${table} WHERE ${id} = $1`,
    findMany: `SELECT ${selected.join(', ')} FROM ${table} WHERE ${id} = ANY($1::${idType}[])`,
    firstPage: `SELECT ${selected.join(', ')} FROM ${table} ORDER BY ${id} LIMIT $1`,
    nextPage: `SELECT ${selected.join(', ')} FROM ${table} WHERE ${id} > $1 ORDER BY ${id} LIMIT $2`,
    version: `SELECT ${version} AS "version" FROM ${table} WHERE ${id} = $1`,
  };
}

/** Appends `row`'s values in column order (json/jsonb serialised); `row` must hold exactly the declared columns. */
export function pushRowValues(
  values: unknown[],
  s: PostgresRepositoryStatements,
  row: Record<string, unknown>,
  where: string,
): void {
  if (row === null || typeof row !== 'object' || Array.isArray(row)) {
    throw new RepositoryConfigurationError(`${where}.toRow must return an object with one entry per declared column`);
  }
  let present = 0;
  for (const column of s.columns) {
    if (!(column in row)) rowMismatch(row, s, where);
    const value = row[column];
    values.push(s.jsonColumns.has(column) && value !== undefined && value !== null ? JSON.stringify(value) : value);
    present++;
  }
  if (Object.keys(row).length !== present) rowMismatch(row, s, where);
}

function rowMismatch(row: Record<string, unknown>, s: PostgresRepositoryStatements, where: string): never {
  const keys = Object.keys(row);
  const missing = s.columns.filter((c) => !keys.includes(c));
  const extra = keys.filter((k) => !s.columns.includes(k));
  throw new RepositoryConfigurationError(
    `${where}.toRow must return exactly the declared columns (id and version are the repository's)` +
      (missing.length ? `; missing: ${missing.join(', ')}` : '') +
      (extra.length ? `; not declared in columns: ${extra.join(', ')}` : ''),
  );
}
