// One application instance racing for keys. Key by key, every worker process waits at a
// barrier (a Redis counter and list shared by all workers) and then fires `callers` concurrent
// prepare calls on that key at once, so every caller of every process contends for every key.
// For each key it reports when its first attempt started and its last one ended (epoch ms,
// high resolution: performance.timeOrigin + performance.now(), comparable across processes on
// one machine), how many attempts it made and which callers won.
// Key i lives in key space (PrepareKey name) `${name}-${i % names}`.
import { performance } from 'node:perf_hooks';
import { Redis } from 'ioredis';
import { nextMessage, openBackend } from './backend.mjs';

const { backend, scope, name, names, keys, callers, worker, processes } = JSON.parse(process.argv[2]);
const { factory, close } = await openBackend(backend, scope);
const spaces = Array.from({ length: names }, (_, n) => factory.create(`${name}-${n}`));
// The barrier blocks its connection (BLPOP): a client of its own, never the backend's.
const barrierClient = new Redis(process.env.REDIS_URL);
await Promise.all(spaces.map((pk) => pk.get('warm-up'))); // connect (and load the scripts) before the start signal
await barrierClient.ping();
process.send({ type: 'ready' });
await nextMessage('go');

const BARRIER_TIMEOUT_S = 20;

/** Returns once all `processes` workers have reached barrier `round`. */
async function barrier(round) {
  const arrivals = `${scope}:barrier:${round}`;
  const release = `${arrivals}:go`;
  const arrived = await barrierClient.incr(arrivals);
  if (arrived === 1) await barrierClient.pexpire(arrivals, 60_000);
  if (arrived === processes) {
    await barrierClient
      .multi()
      .rpush(release, ...Array.from({ length: processes }, () => '1'))
      .pexpire(release, 60_000)
      .exec();
  }
  const token = await barrierClient.blpop(release, BARRIER_TIMEOUT_S);
  if (token === null) throw new Error(`worker ${worker}: barrier ${round} not released within ${BARRIER_TIMEOUT_S} s`);
}

const now = () => performance.timeOrigin + performance.now();
/** Per key: [first attempt's start, last attempt's end, attempts, winning callers]. */
const attempts = [];
for (let i = 0; i < keys; i++) {
  const pk = spaces[i % names];
  const key = `key-${i}`;
  await barrier(i);
  const firstStart = now();
  const results = await Promise.all(
    Array.from({ length: callers }, (_, caller) => pk.prepare(key, { worker, caller, key })),
  );
  const lastEnd = now();
  for (const won of results) if (typeof won !== 'boolean') throw new Error(`prepare answered ${String(won)}`);
  attempts.push([firstStart, lastEnd, results.length, results.flatMap((won, caller) => (won ? [caller] : []))]);
}
// Waits until the message is handed to the channel: disconnecting earlier may drop a large one.
await new Promise((resolve, reject) =>
  process.send({ type: 'done', attempts }, (error) => (error ? reject(error) : resolve())),
);
barrierClient.disconnect();
await close();
process.disconnect();
