import { RepositoryConfigurationError } from '../../errors/repository-configuration.error.js';

// Unquoted-identifier shape, at most 63 bytes (NAMEDATALEN - 1): PostgreSQL would silently
// truncate a longer name, and two long names could then name one table.
const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;

/**
 * `name` double-quoted, after checking it is a plain identifier. Only names that pass reach
 * SQL text, so no configuration value can inject SQL; quoting keeps reserved words (a column
 * named `order`) working and keeps the case as written.
 */
export function quoteIdentifier(name: unknown, what: string): string {
  if (typeof name !== 'string' || !IDENTIFIER.test(name)) {
    throw new RepositoryConfigurationError(
      `${what} must be an identifier of letters, digits and underscores, not starting with a digit, at most 63 characters; got ${JSON.stringify(name)}`,
    );
  }
  return `"${name}"`;
}

/** `table` or `schema.table`, each part checked and quoted. */
export function quoteTableName(name: unknown, what: string): string {
  if (typeof name !== 'string') return quoteIdentifier(name, what);
  const parts = name.split('.');
  if (parts.length > 2) quoteIdentifier(name, what);
  return parts.map((part) => quoteIdentifier(part, what)).join('.');
}

/**
 * A column's SQL type as a subclass declares it (`text NOT NULL`, `jsonb`, `integer DEFAULT 0`).
 * Types are written by the developer, never taken from a request; the check only keeps a
 * declaration from ending the statement or hiding a comment.
 */
export function checkColumnType(type: unknown, what: string): string {
  if (typeof type !== 'string' || type.trim().length === 0 || /;|--|\/\*|\*\//.test(type)) {
    throw new RepositoryConfigurationError(
      `${what} must be an SQL type such as 'text NOT NULL' (no ';' or comments), got ${JSON.stringify(type)}`,
    );
  }
  return type.trim();
}

/** True for json/jsonb columns, whose values the repository serialises itself. */
export function isJsonType(type: string): boolean {
  return /^jsonb?\b/i.test(type);
}
