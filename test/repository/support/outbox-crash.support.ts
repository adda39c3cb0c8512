// Shared by the outbox crash tests: worker processes (test/repository/workers, importing the
// built library) that write and relay until SIGKILLed, and the tally of what their handlers
// received against what was written.
import { expect } from '@jest/globals';
import { WorkerProcess } from '../../prepare-key-backends/support/worker-process.js';

export { killRunningWorkers } from '../../prepare-key-backends/support/worker-process.js';

export type OutboxWorkerRole = 'write' | 'relay' | 'load';

export interface OutboxWorkerArgs {
  backend: 'mongo' | 'postgres-wal';
  /** MongoDB: the database. */
  dbName?: string;
  /** PostgreSQL (the WAL outbox): the server, with its search path. */
  url?: string;
  collection: string;
  ids: string[];
  leaseMs: number;
  /** With role 'write': run a relay that parks right after its claim (the test seam). */
  park?: boolean;
  /** The relay's clock runs this far ahead of the machine's (the leases of a dead relay over for it). */
  clockAheadMs?: number;
  /** The handler parks on this aggregate's first event (before logging it), reporting 'parked'. */
  parkOn?: string;
}

export function startOutboxWorker(role: OutboxWorkerRole, args: OutboxWorkerArgs): WorkerProcess {
  return new WorkerProcess('../../repository/workers/outbox-crash.worker.mjs', { ...args, role });
}

/** SIGKILL, and wait until the process is gone. */
export async function killHard(worker: WorkerProcess): Promise<void> {
  worker.kill('SIGKILL');
  expect(await worker.exited).toEqual({ code: null, signal: 'SIGKILL' });
}

/** A graceful stop (the relay finishes or releases its claims), and wait until the process is gone. */
export async function stopGracefully(worker: WorkerProcess): Promise<void> {
  worker.send({ type: 'stop' });
  await worker.exited;
}

export interface Delivery {
  eventId: string;
  id: string;
  version: number;
}

export interface DeliveryTally {
  /** Events the committed writes stored: every version 1..v of every aggregate stored at v. */
  written: number;
  /** Handler calls, repeats included. */
  delivered: number;
  /** Written events no handler received. */
  lost: number;
  /** Deliveries beyond the first of an event. */
  duplicates: number;
  /** Deliveries of events no committed write stored (must be none). */
  unknown: number;
}

/** What the handlers received, against the write model's versions (one event per version). */
export function tallyDeliveries(
  storedVersions: ReadonlyMap<string, number>,
  deliveries: readonly Delivery[],
): DeliveryTally {
  const seen = new Map<string, Set<number>>();
  const byEvent = new Map<string, number>();
  let unknown = 0;
  for (const d of deliveries) {
    byEvent.set(d.eventId, (byEvent.get(d.eventId) ?? 0) + 1);
    const stored = storedVersions.get(d.id);
    if (stored === undefined || d.version > stored) unknown++;
    const versions = seen.get(d.id) ?? new Set<number>();
    versions.add(d.version);
    seen.set(d.id, versions);
  }
  let written = 0;
  let lost = 0;
  for (const [id, version] of storedVersions) {
    written += version;
    for (let v = 1; v <= version; v++) if (!seen.get(id)?.has(v)) lost++;
  }
  const duplicates = [...byEvent.values()].reduce((sum, n) => sum + n - 1, 0);
  return { written, delivered: deliveries.length, lost, duplicates, unknown };
}
