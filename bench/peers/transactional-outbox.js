// pg-transactional-outbox (npm), the outbox a user would pick instead of @ddd-kit/repository's,
// doing the same work: a version-checked UPDATE of a counter row and its outbox message in one
// transaction, then the message handed to a handler.
//  - Writes: as its README shows, a pooled client, BEGIN, the business UPDATE … WHERE id AND
//    version (checked on its row count), initializeMessageStorage's INSERT of the message, COMMIT.
//  - Delivery: its logical-replication listener (initializeReplicationMessageListener), which
//    needs wal_level=logical, a publication of the outbox table and a replication slot (its
//    DatabaseSetup statements). For every message it opens a transaction on a pool of its own,
//    locks the message row (SELECT … FOR NO KEY UPDATE NOWAIT), runs the handler and marks the
//    row processed before COMMIT, one message at a time (its default mutex strategy); messages
//    are acknowledged to the slot after that. This is its exactly-once-processing design (at
//    least once delivery), the outbox defaults of its settings: no max-attempts and no
//    poisonous-message protection.
// Its log is counted (errors and warnings, with the first few kept) so a listener that
// restarts or warns is visible in the row's note.
import { randomUUID } from 'node:crypto';
import {
  DatabaseSetup,
  executeTransaction,
  initializeMessageStorage,
  initializeReplicationMessageListener,
} from 'pg-transactional-outbox';

/** A logger in its interface that keeps count of errors and warnings, and the first few of them. */
function countingLogger() {
  const counts = { error: 0, warn: 0 };
  const first = [];
  const keep =
    (type) =>
    (...args) => {
      counts[type]++;
      if (first.length < 3)
        first.push(
          `${type}: ${args
            .map((a) => (a instanceof Error ? a.message : typeof a === 'string' ? a : ''))
            .join(' ')
            .trim()}`,
        );
    };
  const ignore = () => undefined;
  return {
    logger: {
      fatal: keep('error'),
      error: keep('error'),
      warn: keep('warn'),
      info: ignore,
      debug: ignore,
      trace: ignore,
      silent: ignore,
      level: 'warn',
    },
    summary: () =>
      counts.error + counts.warn === 0
        ? 'logged no warning or error'
        : `logged ${counts.error} errors and ${counts.warn} warnings (${first.join('; ')})`,
  };
}

/**
 * The peer on `pool` (its connections set by the caller: synchronous_commit and all), with its
 * outbox table `outbox` and a counters table `counters` of the caller's DDL; `aggregates` rows,
 * writer w taking its `perWriter` rows in turn. `url` and `connectionOptions` open its listener.
 */
export async function transactionalOutboxPeer({
  url,
  pool,
  ddl,
  counters,
  outbox,
  writers,
  perWriter,
  connectionOptions,
}) {
  const { logger, summary } = countingLogger();
  const settings = {
    dbSchema: 'public',
    dbTable: outbox,
    dbPublication: `${outbox}_pub`,
    dbReplicationSlot: `${outbox}_slot`,
    enableMaxAttemptsProtection: false,
    enablePoisonousMessageProtection: false,
  };
  // Its own setup statements (the listener role is the cluster's superuser, already REPLICATION).
  const setup = {
    outboxOrInbox: 'outbox',
    database: 'postgres',
    schema: 'public',
    table: outbox,
    listenerRole: 'postgres',
    publication: settings.dbPublication,
    replicationSlot: settings.dbReplicationSlot,
  };
  await pool.query(`DROP TABLE IF EXISTS "${counters}"`);
  await pool.query(ddl(counters));
  await pool.query(DatabaseSetup.dropAndCreateTable(setup));
  await pool.query(DatabaseSetup.setupReplicationCore(setup));
  const rows = [];
  for (let i = 0; i < writers * perWriter; i++) {
    await pool.query(`INSERT INTO "${counters}" ("id", "version", "label", "count") VALUES ($1, 1, $1, 0)`, [`t${i}`]);
    rows.push({ id: `t${i}`, version: 1, count: 0 });
  }
  const store = initializeMessageStorage({ outboxOrInbox: 'outbox', settings }, logger);
  const next = new Array(writers).fill(0);
  let writes = 0;

  /** One checked UPDATE and its message in one transaction; resolves to the message id once committed. */
  const update = async (w) => {
    const row = rows[w * perWriter + (next[w]++ % perWriter)];
    const message = {
      id: randomUUID(),
      aggregateType: 'counter',
      aggregateId: row.id,
      messageType: 'counter_updated',
      payload: { label: row.id, count: row.count + 1, version: row.version + 1 },
      createdAt: new Date().toISOString(),
    };
    await executeTransaction(await pool.connect(), async (client) => {
      const result = await client.query(
        `UPDATE "${counters}" SET "label" = $3, "count" = $4, "version" = $5 WHERE "id" = $1 AND "version" = $2`,
        [row.id, row.version, row.id, row.count + 1, row.version + 1],
      );
      if (result.rowCount !== 1) throw new Error(`pg-transactional-outbox side: UPDATE of ${row.id} matched nothing`);
      await store(message, client);
    });
    row.count++;
    row.version++;
    writes++;
    return message.id;
  };

  /** Deletes every stored message (what its cleanup would do in time); resolves to how many there were. */
  const drain = async () => (await pool.query(`DELETE FROM public.${outbox}`)).rowCount;

  /**
   * Starts its replication listener (creating the slot first), calling `onMessage(message)` for
   * each message it hands on; resolves to a function that shuts it down and drops the slot.
   */
  const listen = async (onMessage) => {
    await pool.query(DatabaseSetup.setupReplicationSlot(setup)); // drops a slot of that name, then creates it
    const [shutdown] = initializeReplicationMessageListener(
      { outboxOrInbox: 'outbox', dbListenerConfig: { connectionString: url, options: connectionOptions }, settings },
      { handle: async (message) => onMessage(message) },
      logger,
    );
    return async () => {
      await shutdown();
      // The walsender may take a moment to let go of the slot.
      for (let attempt = 0; ; attempt++) {
        try {
          await pool.query('SELECT pg_drop_replication_slot($1)', [settings.dbReplicationSlot]);
          return;
        } catch (error) {
          if (attempt >= 50) throw error;
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
      }
    };
  };

  /** Fails unless every counter row holds the count and version its writes left. */
  const verify = async () => {
    const { rows: stored } = await pool.query(`SELECT "id", "version", "count" FROM "${counters}"`);
    const expected = new Map(rows.map((row) => [row.id, row]));
    for (const row of stored) {
      const mine = expected.get(row.id);
      if (Number(row.version) !== mine.version || row.count !== mine.count)
        throw new Error(
          `pg-transactional-outbox side: ${row.id} holds version ${row.version}, expected ${mine.version}`,
        );
    }
  };

  const close = async () => {
    await pool.query(`DROP PUBLICATION IF EXISTS ${settings.dbPublication}`);
    await pool.query(`DROP TABLE IF EXISTS "${counters}", public.${outbox}`);
  };

  return { update, drain, listen, verify, close, writes: () => writes, logSummary: summary };
}
