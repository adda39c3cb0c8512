// An application instance for the outbox crash tests: it writes Counters (each write stores
// its event in the outbox) and/or runs an OutboxRelay whose handler keeps a read model, and is
// SIGKILLed by the test at the moments it chooses.
//   role 'write':  writes once to each id (insert, or update when stored), reports 'written',
//                  then waits to be killed (no handler has run: with an outbox nothing is
//                  published in process). With `park: true` a relay runs too, parked by its
//                  onClaimed option: it claims, then never reaches a handler.
//   role 'relay':  runs a relay until told to stop (or killed); with `clockAheadMs` its clock runs
//                  that far ahead of the machine's.
//   role 'load':   writes to random ids (a steady load: a few ms apart) and runs a relay, until killed.
// With `parkOn` (an id), the handler parks on that aggregate's first event (before logging it) and
// reports 'parked': a handler that never finishes, where the test kills the process. A relay
// reports 'ready' once it can deliver (with the WAL outbox: once it reads the slot).
import { OptimisticLockError, retryOnConflict } from '@ddd-kit/repository';
import { OutboxRelay } from '@ddd-kit/repository/outbox';
import { sleep } from '../../support/wait.js';
import { Counter, openOutboxBackend } from './outbox-backend.mjs';

const args = JSON.parse(process.argv[2]);
const { backend, ids, leaseMs, role, park, clockAheadMs, parkOn } = args;
const { repository, store, handle } = await openOutboxBackend(backend, args);

function relay() {
  return new OutboxRelay({
    stores: [store],
    deliver: async (_aggregate, events) => {
      if (parkOn !== undefined && events.some((event) => event.id === parkOn)) {
        process.send({ type: 'parked' });
        await new Promise(() => undefined);
      }
      await handle(events);
    },
    leaseMs,
    pollIntervalMs: 100,
    backoff: { initialMs: 20, maxMs: 200 },
    batchSize: 8,
    autoStart: false,
    // A clock ahead of the machine's: the leases of a relay that died are over for this one at once.
    ...(clockAheadMs ? { clock: () => Date.now() + clockAheadMs } : {}),
    // Parked after its claim, before any handler: where the test kills the process.
    ...(park ? { onClaimed: () => new Promise(() => undefined) } : {}),
  });
}

/** One committed write to `id`: an insert, or an update of what is stored (conflicts retried). */
async function writeOnce(id) {
  await retryOnConflict(
    async () => {
      const counter = await repository.findById(id);
      if (counter !== null) {
        counter.increment();
        await repository.update(counter);
        return;
      }
      const fresh = new Counter(id, 'crash');
      fresh.increment();
      try {
        await repository.insert(fresh);
      } catch (error) {
        // Another writer inserted it first: a conflict like any other, retried as an update.
        if (error?.name === 'DuplicateAggregateError') throw new OptimisticLockError('Counter', id, 0);
        throw error;
      }
    },
    { attempts: 50 },
  );
}

process.on('message', async (message) => {
  if (message.type === 'stop') {
    await running?.stop();
    process.send({ type: 'stopped' });
    process.exit(0);
  }
});

let running;
if (role === 'write') {
  for (const id of ids) await writeOnce(id);
  process.send({ type: 'written' });
  if (park) {
    running = relay();
    await running.start();
  }
  await new Promise(() => {}); // parked: the test kills the process here
} else if (role === 'relay') {
  running = relay();
  await running.start();
  await store.whenHolding?.();
  process.send({ type: 'ready' });
} else if (role === 'load') {
  running = relay();
  await running.start();
  process.send({ type: 'ready' });
  for (;;) {
    const id = ids[Math.floor(Math.random() * ids.length)];
    try {
      await writeOnce(id);
    } catch (error) {
      if (!(error instanceof OptimisticLockError)) throw error;
    }
    await sleep(25); // a steady load, not a busy loop
  }
} else {
  throw new Error(`unknown role ${role}`);
}
