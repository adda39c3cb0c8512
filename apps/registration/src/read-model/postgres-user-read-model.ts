import { PgSchema } from '@ddd-kit/core/postgres';
import type { DataSyncEvent } from '@ddd-kit/repository';
import type { ReplicaPage } from '@ddd-kit/repository/reconciliation';
import type { Pool } from 'pg';
import type { UserSnapshot, UserView } from '../users/user.aggregate.js';
import { UserReadModel } from './user-read-model.js';

/**
 * The read model in a PostgreSQL table shared by every instance of the app:
 * `user_views (id, username, version, deleted)`. Every value is a parameter.
 *
 * Idempotent by version, as events delivered at least once require: an event no newer than what
 * the table holds changes nothing, so a repeat or a late redelivery is harmless. A PURGE leaves
 * a tombstone (`deleted`, with its version) rather than deleting the row, so an older UPSERT
 * delivered after it (a redelivery, a replayed dead letter) cannot bring the user back.
 * Tombstones are invisible to queries and to reconciliation; ids are never reused.
 */
export class PostgresUserReadModel extends UserReadModel {
  // The kit's table path: made at start-up on a connection of its own, and listed by
  // `npm run schema` (collectSchemaStatements) with the libraries' tables.
  private readonly schema: PgSchema;

  constructor(
    private readonly pool: Pool,
    private readonly table = 'user_views',
  ) {
    super();
    if (!/^[a-z_][a-z0-9_]{0,62}$/.test(table))
      throw new TypeError(`read-model table must be a plain lower-case identifier, got ${JSON.stringify(table)}`);
    this.schema = new PgSchema(pool, {
      owner: 'PostgresUserReadModel',
      create: true,
      part: 'registration/user-views',
      tables: () => [{ name: table, columns: ['id', 'username', 'version', 'deleted'] }],
      // Numbered by place: a change to the table is the next entry, never an edit of one.
      migrations: () => [
        {
          name: 'create table',
          statements: [
            `CREATE TABLE IF NOT EXISTS ${table} (id text PRIMARY KEY, username text NOT NULL, version bigint NOT NULL, deleted boolean NOT NULL DEFAULT false)`,
            `CREATE INDEX IF NOT EXISTS ${table}_username ON ${table} (username)`,
          ],
        },
      ],
    });
  }

  /** Created once, at start-up (backends/ calls it before the app serves). */
  ensureTable(): Promise<void> {
    return this.schema.ensure();
  }

  async findByUsername(username: string): Promise<UserView[]> {
    const { rows } = await this.pool.query(
      `SELECT id, username, version FROM ${this.table} WHERE username = $1 AND NOT deleted ORDER BY id`,
      [username],
    );
    return rows.map((r) => ({ id: r.id, username: r.username, version: Number(r.version) }));
  }

  async apply(events: readonly DataSyncEvent<string, UserSnapshot>[]): Promise<void> {
    for (const event of events) {
      if (event.type === 'PURGE') await this.tombstoneIfNewer(event.id, event.version);
      else await this.upsertIfNewer(event.id, event.version, event.snapshot);
    }
  }

  async listVersions({ cursor, limit }: { cursor: string | null; limit: number }): Promise<ReplicaPage<string>> {
    const { rows } =
      cursor === null
        ? await this.pool.query(`SELECT id, version FROM ${this.table} WHERE NOT deleted ORDER BY id LIMIT $1`, [limit])
        : await this.pool.query(
            `SELECT id, version FROM ${this.table} WHERE id > $1 AND NOT deleted ORDER BY id LIMIT $2`,
            [cursor, limit],
          );
    return {
      entries: rows.map((r) => ({ id: r.id, version: Number(r.version) })),
      cursor: rows.length === limit ? rows[rows.length - 1].id : null,
    };
  }

  async upsert(id: string, version: number, snapshot: UserSnapshot): Promise<void> {
    await this.pool.query(
      `INSERT INTO ${this.table} (id, username, version) VALUES ($1, $2, $3)
       ON CONFLICT (id) DO UPDATE SET username = EXCLUDED.username, version = EXCLUDED.version, deleted = false`,
      [id, snapshot.username, version],
    );
  }

  /** Reconciliation's purge (the user is gone): a tombstone at the version held, so no event it already saw comes back. */
  async purge(id: string): Promise<void> {
    await this.pool.query(`UPDATE ${this.table} SET deleted = true WHERE id = $1`, [id]);
  }

  private async upsertIfNewer(id: string, version: number, snapshot: UserSnapshot): Promise<void> {
    await this.pool.query(
      `INSERT INTO ${this.table} (id, username, version) VALUES ($1, $2, $3)
       ON CONFLICT (id) DO UPDATE SET username = EXCLUDED.username, version = EXCLUDED.version, deleted = false WHERE ${this.table}.version < EXCLUDED.version`,
      [id, snapshot.username, version],
    );
  }

  private async tombstoneIfNewer(id: string, version: number): Promise<void> {
    await this.pool.query(
      `INSERT INTO ${this.table} (id, username, version, deleted) VALUES ($1, '', $2, true)
       ON CONFLICT (id) DO UPDATE SET username = '', version = EXCLUDED.version, deleted = true WHERE ${this.table}.version < EXCLUDED.version`,
      [id, version],
    );
  }
}
