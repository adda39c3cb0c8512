// A relay in a process of its own, for the lag rows of bench/outbox-peer.js: an OutboxRelay
// with default settings on the bench's outbox table, woken by LISTEN/NOTIFY like a relay of
// another instance. It reports each event its handler gets to the parent (IPC) with the time,
// on the machine's clock (performance.timeOrigin + performance.now(), so that both processes
// read one clock), and stops on 'stop'.
//   OUTBOX_RELAY_URL    the database
//   OUTBOX_RELAY_TABLE  the outbox table
//   OUTBOX_RELAY_OPTIONS  pg's connection options (synchronous_commit as the bench sets it)
import pg from 'pg';
import { OutboxRelay, PostgresOutboxStore } from '@ddd-kit/repository/outbox';

const pool = new pg.Pool({
  connectionString: process.env.OUTBOX_RELAY_URL,
  max: 4,
  options: process.env.OUTBOX_RELAY_OPTIONS,
});
const store = new PostgresOutboxStore({ pool, table: process.env.OUTBOX_RELAY_TABLE });
const relay = new OutboxRelay({
  stores: [store],
  owner: `bench-remote-relay:${process.pid}`,
  deliver: async (_aggregate, events) => {
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
process.send('ready');
