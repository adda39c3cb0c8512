import { randomUUID } from 'node:crypto';
import { IdGeneratorError, IdGeneratorOptionsError } from '../../errors.js';
import { collectingSchema, companionPool } from '@ddd-kit/core/postgres';
import {
  assertPool,
  idSourceSchema,
  indexName,
  inOwnTransaction,
  tableName,
  type PgPool,
  type PgPoolClient,
} from '../../pg/pg.utils.js';
import {
  LeasedMachineIdDistributor,
  type LeasedMachineIdDistributorOptions,
  type StoreDistribution,
} from '../leased-machine-id-distributor.js';
import type { MachineIdRequest, MachineIdState } from '../machine-id-distributor.js';
import * as sql from './postgres-machine-id.sql.js';

export interface PostgresMachineIdDistributorOptions extends LeasedMachineIdDistributorOptions {
  /** Schema of the tables; default none (the connection's search_path). */
  schema?: string;
  /** Prefix of the table names; default `ddd_kit_` (tables `ddd_kit_machine_id_namespaces`, `ddd_kit_machine_ids`). */
  tablePrefix?: string;
  /** Create the tables (IF NOT EXISTS) on first use; default true. False: they were created by a migration (DDL in the README). */
  createTables?: boolean;
}

/**
 * Machine IDs shared by a fleet through PostgreSQL (node-postgres). Time is the database
 * server's (`clock_timestamp()`), so every holder's deadline is judged on one clock. Each step
 * runs outside any transaction of the caller's (a lease must outlive any rollback), on two
 * connections of the distributor's own made from the pool's settings: requests holding every
 * connection of the application's pool never make a heartbeat wait, so the lease is not lost
 * to request traffic. `close()` (the holder calls it after its release) ends them.
 *
 * | step | what runs | "nothing matched" means |
 * |---|---|---|
 * | distribute | one short transaction: lock the namespace row; pick the instance's own ID, else the lowest released, else a never-used one, else one past its holder's deadline; take it (writing this holder's deadline) | MachineIdOverflowError |
 * | guard | one `UPDATE … WHERE instance_id = $holder` moving the deadline forward | MachineIdLostError |
 * | revert | one statement releasing the row and recording the call's id | `false`: not this instance's |
 *
 * Every statement of the transaction writes absolute values, so one that reaches the server
 * twice changes nothing more; a revert run twice answers `true` both times.
 */
export class PostgresMachineIdDistributor extends LeasedMachineIdDistributor {
  readonly tables: Readonly<sql.MachineIdTables>;
  private readonly index: string;
  private readonly pool: PgPool;
  /** The lease's own connections (see the class comment). */
  private readonly leasePool: PgPool & { end?(): Promise<void> };
  private readonly ensureTables: () => Promise<void>;
  private readonly statements: {
    lockNamespace: string;
    candidate: string;
    take: string;
    advanceNext: string;
    guard: string;
    revert: string;
  };

  constructor(pool: PgPool, options: PostgresMachineIdDistributorOptions = {}) {
    super(options);
    this.pool = assertPool(pool, 'PostgresMachineIdDistributor');
    this.leasePool = companionPool(this.pool, { max: 2 });
    const prefix = options.tablePrefix ?? 'ddd_kit_';
    const where = 'PostgresMachineIdDistributor';
    this.tables = Object.freeze({
      namespaces: tableName(options.schema, prefix, 'machine_id_namespaces', where),
      ids: tableName(options.schema, prefix, 'machine_ids', where),
    });
    this.index = indexName(prefix, 'machine_ids_instance', where);
    const createTables = options.createTables ?? true;
    if (typeof createTables !== 'boolean')
      throw new IdGeneratorOptionsError(`${where}: createTables must be a boolean`);
    this.ensureTables = idSourceSchema(this.pool, {
      owner: where,
      part: '@ddd-kit/id-generator/machine-ids',
      create: createTables,
      tables: () => [
        { name: this.tables.namespaces, columns: ['namespace', 'machine_bits', 'next_machine_id'] },
        {
          name: this.tables.ids,
          columns: ['namespace', 'machine_id', 'instance_id', 'deadline_ms', 'bound_ms', 'last_timestamp', 'op'],
        },
      ],
      // Numbered by place, forward only: a change appends the next step (docs/postgresql.md, Migrations).
      migrations: () => [{ name: 'create tables', statements: this.ddl() }],
    });
    this.statements = {
      lockNamespace: sql.lockNamespace(this.tables),
      candidate: sql.candidate(this.tables),
      take: sql.take(this.tables),
      advanceNext: sql.advanceNext(this.tables),
      guard: sql.guard(this.tables),
      revert: sql.revert(this.tables),
    };
  }

  /** The DDL this distributor runs on first use (for a migration when `createTables: false`). */
  ddl(): string[] {
    return sql.machineIdDdl(this.tables, this.index);
  }

  protected async storeDistribute(request: MachineIdRequest, until: number): Promise<StoreDistribution> {
    await this.ensureTables();
    // Booted only to read the schema (collectSchemaStatements): no table to lease from yet, no ID issued.
    if (collectingSchema()) return { machineId: 0, lastTimestamp: 0 };
    const { namespace, machineBits, instanceId } = request;
    const s = this.statements;
    return inOwnTransaction(this.leasePool, async (client) => {
      const ns = (await client.query(s.lockNamespace, [namespace, machineBits])).rows[0];
      if (Number(ns.machine_bits) !== machineBits) return { storedBits: Number(ns.machine_bits) };
      // The namespace row is locked: no other distribute runs. A guard may still move a
      // candidate's deadline on between choosing and taking it; the take then writes nothing
      // and the choice is made again.
      for (let attempt = 0; attempt < 5; attempt++) {
        const choice = await this.choose(client, request, Number(ns.next_machine_id));
        if (choice === undefined) return { overflow: true };
        const { machineId, floor, fresh } = choice;
        if (fresh) await client.query(s.advanceNext, [namespace, machineId + 1]);
        const taken = await client.query(s.take, [namespace, machineId, instanceId, this.safeGuardMs, until, floor]);
        if (taken.rowCount === 1) return { machineId, lastTimestamp: floor };
      }
      throw new IdGeneratorError(
        `PostgresMachineIdDistributor: every machine ID chosen in namespace "${namespace}" was renewed by its holder meanwhile; try again`,
      );
    });
  }

  /** The ID to take, in the order of the table above, and the floor its IDs must follow. */
  private async choose(
    client: PgPoolClient,
    request: MachineIdRequest,
    next: number,
  ): Promise<{ machineId: number; floor: number; fresh: boolean } | undefined> {
    const found = (await client.query(this.statements.candidate, [request.namespace, request.instanceId])).rows[0] as
      { kind: number; machine_id: number; last_timestamp: string; bound_ms: string | null; now_ms: string } | undefined;
    if (found && found.kind !== 3) {
      const last = Number(found.last_timestamp);
      // Held already: a restart under a stable instance ID (the earlier incarnation stopped
      // before now, and issued nothing at or past its bound). Released: its recorded floor.
      const floor =
        found.kind === 0 ? Math.max(last, Math.min(Number(found.bound_ms ?? 0), Number(found.now_ms))) : last;
      return { machineId: Number(found.machine_id), floor, fresh: false };
    }
    if (next < 2 ** request.machineBits) return { machineId: next, floor: 0, fresh: true };
    // Past its holder's own deadline: that holder issued nothing at or after its bound.
    if (found)
      return {
        machineId: Number(found.machine_id),
        floor: Math.max(Number(found.last_timestamp), Number(found.bound_ms ?? 0)),
        fresh: false,
      };
    return undefined;
  }

  protected async storeGuard(state: MachineIdState, until: number): Promise<boolean> {
    await this.ensureTables();
    if (collectingSchema()) return true;
    const result = await this.leasePool.query(this.statements.guard, [
      state.namespace,
      state.machineId,
      state.instanceId,
      this.safeGuardMs,
      until,
      state.lastTimestamp,
    ]);
    return result.rowCount === 1;
  }

  protected async storeRevert(state: MachineIdState): Promise<boolean> {
    await this.ensureTables();
    if (collectingSchema()) return true;
    const result = await this.leasePool.query(this.statements.revert, [
      state.namespace,
      state.machineId,
      state.instanceId,
      state.lastTimestamp,
      randomUUID(),
    ]);
    return result.rows[0]?.released === true;
  }

  /** Ends the lease's own connections (the pool it was given stays the caller's). */
  override async close(): Promise<void> {
    if (this.leasePool !== this.pool) await this.leasePool.end?.();
  }
}
