import {
  quoteIdentifier as quoteCheckedIdentifier,
  quoteTableName as quoteCheckedTableName,
} from '@ddd-kit/core/postgres';
import { RepositoryConfigurationError } from '../../errors.js';

const configurationError = (message: string): Error => new RepositoryConfigurationError(message);

/** `name` checked (see @ddd-kit/core/postgres) and double-quoted; a bad one is a RepositoryConfigurationError. */
export function quoteIdentifier(name: unknown, what: string): string {
  return quoteCheckedIdentifier(name, what, configurationError);
}

/** `table` or `schema.table`, each part checked and quoted. */
export function quoteTableName(name: unknown, what: string): string {
  return quoteCheckedTableName(name, what, configurationError);
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
