import { DB_NOW_MS } from '../../pg/pg.utils.js';

// SQL of PostgresMachineIdDistributor. Two tables (names: `<schema>.<tablePrefix>…`):
//   machine_id_namespaces  one row per namespace: its machine bits, the first never-used ID; the
//                          row lock serialises the distributes of a namespace
//   machine_ids            one row per machine ID ever used in a namespace:
//     instance_id     the holder (NULL once released)
//     deadline_ms     the holder's deadline by the DATABASE clock: the last distribute/guard +
//                     the holder's own safeGuardMs; reclaimable only after it
//     bound_ms        the holder's deadline by ITS OWN clock: it issues no ID at or after it
//     last_timestamp  the floor for the next holder (latest reported or started-after timestamp)
//     op              the last revert call that released the row (a resend of it finds it)
// Every value is a parameter; table names are validated identifiers.

export interface MachineIdTables {
  namespaces: string;
  ids: string;
}

export function machineIdDdl(t: MachineIdTables, index: string): string[] {
  return [
    `CREATE TABLE IF NOT EXISTS ${t.namespaces} (
  namespace text PRIMARY KEY,
  machine_bits integer NOT NULL,
  next_machine_id bigint NOT NULL DEFAULT 0
)`,
    `CREATE TABLE IF NOT EXISTS ${t.ids} (
  namespace text NOT NULL,
  machine_id integer NOT NULL,
  instance_id text,
  deadline_ms bigint,
  bound_ms bigint,
  last_timestamp bigint NOT NULL DEFAULT 0,
  op text,
  PRIMARY KEY (namespace, machine_id)
)`,
    `CREATE UNIQUE INDEX IF NOT EXISTS ${index} ON ${t.ids} (namespace, instance_id) WHERE instance_id IS NOT NULL`,
  ];
}

/** $1 namespace, $2 machineBits. Creates or locks the namespace row (until COMMIT). */
export const lockNamespace = (t: MachineIdTables) => `
INSERT INTO ${t.namespaces} AS n (namespace, machine_bits) VALUES ($1, $2)
ON CONFLICT (namespace) DO UPDATE SET namespace = n.namespace
RETURNING machine_bits, next_machine_id`;

/**
 * $1 namespace, $2 instanceId. The best candidate: kind 0 = held by this instance, 1 = the lowest
 * released, 3 = the one whose holder's deadline passed longest ago (database clock).
 */
export const candidate = (t: MachineIdTables) => `
SELECT kind, machine_id, last_timestamp, bound_ms, ${DB_NOW_MS} AS now_ms FROM (
  (SELECT 0 AS kind, machine_id, last_timestamp, bound_ms, 0::bigint AS rank FROM ${t.ids}
    WHERE namespace = $1 AND instance_id = $2 LIMIT 1)
  UNION ALL
  (SELECT 1, machine_id, last_timestamp, bound_ms, machine_id::bigint AS rank FROM ${t.ids}
    WHERE namespace = $1 AND instance_id IS NULL ORDER BY machine_id LIMIT 1)
  UNION ALL
  (SELECT 3, machine_id, last_timestamp, bound_ms, deadline_ms AS rank FROM ${t.ids}
    WHERE namespace = $1 AND instance_id IS NOT NULL AND deadline_ms < ${DB_NOW_MS} ORDER BY deadline_ms, machine_id LIMIT 1)
) c ORDER BY kind, rank LIMIT 1`;

/**
 * $1 namespace, $2 machineId, $3 instanceId, $4 safeGuardMs, $5 until (holder clock), $6 floor.
 * Takes the row (the same values again if the statement runs twice) only if, at the moment of
 * the write, it is this instance's, released, or past its holder's deadline: a guard that
 * committed after the candidate was chosen (its holder still issuing) makes this a no-op (no
 * row), and the choice is made again.
 */
export const take = (t: MachineIdTables) => `
INSERT INTO ${t.ids} AS m (namespace, machine_id, instance_id, deadline_ms, bound_ms, last_timestamp)
VALUES ($1, $2, $3, ${DB_NOW_MS} + $4::bigint, $5, $6)
ON CONFLICT (namespace, machine_id) DO UPDATE SET
  instance_id = EXCLUDED.instance_id,
  deadline_ms = EXCLUDED.deadline_ms,
  bound_ms = EXCLUDED.bound_ms,
  last_timestamp = GREATEST(m.last_timestamp, EXCLUDED.last_timestamp)
WHERE m.instance_id = $3 OR m.instance_id IS NULL OR m.deadline_ms < ${DB_NOW_MS}`;

/** $1 namespace, $2 the new first never-used ID (absolute: running twice changes nothing). */
export const advanceNext = (t: MachineIdTables) => `
UPDATE ${t.namespaces} SET next_machine_id = $2 WHERE namespace = $1 AND next_machine_id < $2`;

/**
 * $1 namespace, $2 machineId, $3 instanceId, $4 safeGuardMs, $5 until, $6 lastTimestamp.
 * One row = still held; moves values only forward (a resend changes nothing).
 */
export const guard = (t: MachineIdTables) => `
UPDATE ${t.ids} SET
  deadline_ms = GREATEST(deadline_ms, ${DB_NOW_MS} + $4::bigint),
  bound_ms = GREATEST(bound_ms, $5),
  last_timestamp = GREATEST(last_timestamp, $6)
WHERE namespace = $1 AND machine_id = $2 AND instance_id = $3`;

/**
 * $1 namespace, $2 machineId, $3 instanceId, $4 lastTimestamp, $5 op. `released` is true when
 * this statement released the row, or when an earlier run of the same call (same op) did.
 */
export const revert = (t: MachineIdTables) => `
WITH before AS (
  SELECT op FROM ${t.ids} WHERE namespace = $1 AND machine_id = $2
), released AS (
  UPDATE ${t.ids} SET instance_id = NULL, deadline_ms = NULL, bound_ms = NULL,
    last_timestamp = GREATEST(last_timestamp, $4), op = $5
  WHERE namespace = $1 AND machine_id = $2 AND instance_id = $3
  RETURNING 1
)
SELECT EXISTS (SELECT 1 FROM released) OR EXISTS (SELECT 1 FROM before WHERE op = $5) AS released`;
