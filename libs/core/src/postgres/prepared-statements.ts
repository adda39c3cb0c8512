import { processWide } from '../process-wide.js';
import type { PgQueryConfig } from './pg.interfaces.js';

/**
 * The ddd-kit parts send the same few statements over and over (a repository's conditional
 * write, the outbox's claim): named, each connection parses and plans one once (node-postgres
 * sends Parse with the name the first time a connection runs it, then only Bind and Execute).
 * For a short write, parsing and planning are most of the server's work.
 *
 * A name stands for one text in the whole process (so two parts never give one name two texts,
 * which node-postgres refuses); the names are counted up as texts first appear, up to
 * MAX_NAMED texts, past which statements go unnamed. Only statements whose text is fixed by a
 * part's configuration are named here, never one built from request values.
 */
const MAX_NAMED = 1000;

interface Registry {
  readonly names: Map<string, string>;
  /** Pools whose statements go unnamed (a pooler in front that does not keep them). */
  readonly unnamed: WeakSet<object>;
}

const registry = processWide<Registry>('pg-prepared-statements', () => ({
  names: new Map(),
  unnamed: new WeakSet(),
}));

/**
 * Whether the ddd-kit parts on `pool` send named (prepared) statements: they do unless told
 * otherwise. Pass false for a pool whose connections do not keep what a session prepared, such
 * as PgBouncer in transaction mode before 1.21 (or without `max_prepared_statements`): every
 * statement is then parsed and planned anew, as an unnamed one is.
 */
export function usePreparedStatements(pool: object, enabled: boolean): void {
  if (enabled) registry.unnamed.delete(pool);
  else registry.unnamed.add(pool);
}

/** True unless `usePreparedStatements(pool, false)` was called. */
export function preparesStatements(pool: object): boolean {
  return !registry.unnamed.has(pool);
}

/**
 * `text` with its `values` as node-postgres takes them: named when `pool` prepares statements
 * (see usePreparedStatements), so the connection that runs it parses and plans it only once.
 * Only for a text fixed by configuration (a table, a column list, a number of events), never
 * one that varies with what a request sends.
 */
export function preparedStatement(pool: object, text: string, values?: readonly unknown[]): PgQueryConfig {
  const name = registry.unnamed.has(pool) ? undefined : nameOf(text);
  return name === undefined
    ? { text, values: values as unknown[] | undefined }
    : { name, text, values: values as unknown[] | undefined };
}

/** The process-wide name of `text`, given on first sight; undefined once MAX_NAMED texts have names. */
function nameOf(text: string): string | undefined {
  let name = registry.names.get(text);
  if (name === undefined && registry.names.size < MAX_NAMED) {
    name = `ddd_kit_${registry.names.size + 1}`;
    registry.names.set(text, name);
  }
  return name;
}
