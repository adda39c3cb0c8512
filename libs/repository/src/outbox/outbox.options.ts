import type { Pool } from 'pg';
import type { OutboxRelaySettings } from './outbox-relay.settings.js';
import type { OutboxStore } from './outbox.interfaces.js';

/** RepositoryModule's `outbox` options (the relay's settings, and what the backends' stores read). */
export interface RepositoryOutboxOptions extends OutboxRelaySettings {
  /** Run the relay in this application (default true); false: writes store events, another process relays them. */
  relay?: boolean;
  /** PostgreSQL: the outbox table, `name` or `schema.name` (default `ddd_kit_outbox`), created at start-up unless `postgres.createTables` is false. */
  table?: string;
  /** PostgreSQL: the LISTEN/NOTIFY channel (default `ddd_kit_outbox`); false: relays poll only. */
  notifyChannel?: string | false;
  /**
   * PostgreSQL: the outbox store of the module's pool, instead of the table outbox — e.g.
   * `(pool) => new PostgresWalOutboxStore({ pool })` (`@ddd-kit/repository/postgres-wal`). Set up
   * at start-up (`ensureSetup`, when it has one); `table` and `notifyChannel` are then unused.
   */
  postgresStore?: (pool: Pool) => OutboxStore;
}
