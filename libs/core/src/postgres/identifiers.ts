import { PgConfigurationError } from '../errors.js';

// Unquoted-identifier shape, at most 63 bytes (NAMEDATALEN - 1): PostgreSQL would silently
// truncate a longer name, and two long names could then name one table.
const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;

/** How a part reports a bad name: its own configuration error class, by default PgConfigurationError. */
export type IdentifierFailure = (message: string) => Error;

const configurationError: IdentifierFailure = (message) => new PgConfigurationError(message);

/** True when `name` is a plain identifier this kit accepts. */
export function isIdentifier(name: unknown): name is string {
  return typeof name === 'string' && IDENTIFIER.test(name);
}

/**
 * `name` double-quoted, after checking it is a plain identifier. Only names that pass reach
 * SQL text, so no configuration value can inject SQL; quoting keeps reserved words (a column
 * named `order`) working and keeps the case as written.
 */
export function quoteIdentifier(name: unknown, what: string, fail: IdentifierFailure = configurationError): string {
  if (!isIdentifier(name)) {
    throw fail(
      `${what} must be an identifier of letters, digits and underscores, not starting with a digit, at most 63 characters; got ${JSON.stringify(name)}`,
    );
  }
  return `"${name}"`;
}

/** `table` or `schema.table`, each part checked and quoted. */
export function quoteTableName(name: unknown, what: string, fail: IdentifierFailure = configurationError): string {
  if (typeof name !== 'string') return quoteIdentifier(name, what, fail);
  const parts = name.split('.');
  if (parts.length > 2) return quoteIdentifier(name, what, fail);
  return parts.map((part) => quoteIdentifier(part, what, fail)).join('.');
}

/** `"schema"."table"` from parts given apart (schema optional), each checked. */
export function qualifiedName(
  schema: unknown,
  table: unknown,
  what: string,
  fail: IdentifierFailure = configurationError,
): string {
  const quoted = quoteIdentifier(table, `${what}: table`, fail);
  return schema === undefined ? quoted : `${quoteIdentifier(schema, `${what}: schema`, fail)}.${quoted}`;
}

/** The last part of a (checked) table name, unquoted: what index names are derived from. */
export function bareTableName(name: string): string {
  return name.split('.').pop()!.replace(/"/g, '');
}
