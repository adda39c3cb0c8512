// A relay in a process of its own, for the lag rows of bench/outbox-peer.js: an OutboxRelay
// with default settings on the bench's outbox table, woken by LISTEN/NOTIFY like a relay of
// another instance. It reports each event its handler gets to the parent (IPC) with the time,
// on the machine's clock (performance.timeOrigin + performance.now(), so that both processes
// read one clock), and stops on 'stop'.
//   OUTBOX_RELAY_URL    the database
//   OUTBOX_RELAY_TABLE  the outbox table
//   OUTBOX_RELAY_OPTIONS  pg's connection options (synchronous_commit as the bench sets it)
//   OUTBOX_RELAY_SLOT   instead of the table: the WAL outbox's slot (and prefix, of the same name)
//   OUTBOX_RELAY_QUIET  1: report nothing per event (a relay that only keeps the slot read)
import pg from 'pg';
import { OutboxRelay, PostgresOutboxStore } from '@ddd-kit/repository/outbox';
import { PostgresWalOutboxStore } from '@ddd-kit/repository/postgres-wal';

const pool = new pg.Pool({
  connectionString: process.env.OUTBOX_RELAY_URL,
  max: 4,
  options: process.env.OUTBOX_RELAY_OPTIONS,
});
const slot = process.env.OUTBOX_RELAY_SLOT;
const quiet = process.env.OUTBOX_RELAY_QUIET === '1';
const store = slot
  ? new PostgresWalOutboxStore({ pool, slot, prefix: slot, deadLetterTable: `${slot}_dead` })
  : new PostgresOutboxStore({ pool, table: process.env.OUTBOX_RELAY_TABLE });
const relay = new OutboxRelay({
  stores: [store],
  owner: `bench-remote-relay:${process.pid}`,
  deliver: async (_aggregate, events) => {
    if (quiet) return;
    const at = performance.timeOrigin + performance.now();
    for (const event of events) process.send({ key: `${event.id}:${event.version}`, at });
  },
});
process.on('message', async (message) => {
  if (message !== 'stop') return;
  await relay.stop();
  await pool.end();
  process.exit(0);
});
await relay.start();
await store.whenHolding?.();
process.send('ready');
