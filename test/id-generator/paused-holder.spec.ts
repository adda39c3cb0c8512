// A holder that is paused (SIGSTOP) for longer than its lease, while another process takes its
// machine ID over, and then resumed (SIGCONT): it must not issue a single ID under the moved ID,
// and it must go on under a new machine ID instead of failing until restarted. Every ID both
// processes wrote is parsed: no duplicates, and the paused process's last ID under the moved
// machine ID is older than the newcomer's first. On Redis and on PostgreSQL.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import pg from 'pg';
import {
  CosIdGenerator,
  PostgresMachineIdDistributor,
  RedisMachineIdDistributor,
  type MachineIdDistributor,
} from '@ddd-kit/id-generator';
import { postgresSchema, redisUrl, uniqueName } from '../support/servers.js';
import { waitFor } from '../support/wait.js';
import { ensureBuilt, progressUntil, readIds, spawnWorker, type WorkerBackend } from './support/id-workers.js';

const SAFE_GUARD_MS = 1_500;
const GUARD_INTERVAL_MS = 150;
const MACHINE_BITS = 2;

interface Store {
  backend: WorkerBackend;
  /** A distributor in this process, for the instances that hold the other IDs. */
  distributor: MachineIdDistributor;
  close(): Promise<void>;
}

async function redisStore(): Promise<Store> {
  const redis = new Redis(redisUrl());
  return {
    backend: { kind: 'redis', url: redisUrl() },
    distributor: new RedisMachineIdDistributor(redis, { safeGuardMs: 60_000 }),
    close: async () => redis.disconnect(),
  };
}

async function postgresStore(): Promise<Store> {
  const schema = await postgresSchema('paused');
  const pool = new pg.Pool({ connectionString: schema.url, max: 2 });
  return {
    backend: { kind: 'postgres', url: schema.url, schema: schema.schema },
    distributor: new PostgresMachineIdDistributor(pool, { schema: schema.schema, safeGuardMs: 60_000 }),
    close: async () => {
      await pool.end();
      await schema.drop();
    },
  };
}

describe.each([
  ['Redis', redisStore],
  ['PostgreSQL', postgresStore],
] as Array<[string, () => Promise<Store>]>)('a holder paused for longer than its lease, on %s', (_label, open) => {
  let store: Store;
  let dir: string;
  const children: ChildProcess[] = [];

  beforeAll(async () => {
    ensureBuilt();
    store = await open();
    dir = mkdtempSync(join(tmpdir(), 'ddd-kit-paused-'));
  }, 120_000);

  afterAll(async () => {
    for (const child of children) {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGCONT');
        child.kill('SIGKILL');
      }
    }
    await store?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('SIGSTOP past its safeGuardMs, its ID taken meanwhile, SIGCONT: no ID twice, none under the moved ID after the newcomer began, and it goes on under a new machine ID', async () => {
    const namespace = uniqueName('paused');
    const config = (name: string) => ({
      backend: store.backend,
      namespace,
      file: join(dir, `${namespace}-${name}.ids`),
      machineBits: MACHINE_BITS,
      safeGuardMs: SAFE_GUARD_MS,
      guardIntervalMs: GUARD_INTERVAL_MS,
      mode: 'continuous' as const,
      chunk: 2_000,
    });

    const a = spawnWorker('A', config('a'), children);
    const aStarted = await waitFor('A started', a.started);
    // Every other machine ID is held by a live instance: B can only take A's.
    const fillers = [];
    for (let i = 1; i < 2 ** MACHINE_BITS; i++) {
      const instanceId = `filler-${i}`;
      fillers.push({
        instanceId,
        ...(await store.distributor.distribute({ namespace, machineBits: MACHINE_BITS, instanceId })),
      });
    }
    await waitFor(
      'A issuing IDs',
      progressUntil(a, (p) => p.written >= 40_000),
    );

    a.child.kill('SIGSTOP');
    const stoppedAt = Date.now();

    // B asks until the store lets it in: once A's deadline has passed (A's own safeGuardMs,
    // Redis's or PostgreSQL's clock), however long that takes here.
    const b = spawnWorker('B', config('b'), children);
    const bStarted = await waitFor('B started', b.started);
    expect(bStarted.machineId).toBe(aStarted.machineId); // taken over while A is stopped
    await waitFor(
      'B issuing IDs',
      progressUntil(b, (p) => p.written >= 40_000),
    );

    // A free ID for A to move to.
    const free = fillers[fillers.length - 1];
    expect(
      await store.distributor.revert({
        namespace,
        machineBits: MACHINE_BITS,
        instanceId: free.instanceId,
        machineId: free.machineId,
        lastTimestamp: Date.now(),
      }),
    ).toBe(true);
    const writtenBeforeStop = a.progress.written;
    // Usually long past by now; B got in as soon as the store allowed, which can be sooner.
    await waitFor('a pause longer than safeGuardMs', () => Date.now() - stoppedAt > SAFE_GUARD_MS);
    a.child.kill('SIGCONT');
    const resumedAt = Date.now();
    expect(resumedAt - stoppedAt).toBeGreaterThan(SAFE_GUARD_MS);

    const moved = await waitFor(
      'A issuing IDs under a new machine ID after SIGCONT',
      progressUntil(a, (p) => p.machineId !== aStarted.machineId && p.written >= writtenBeforeStop + 40_000),
    );
    expect(moved.machineId).toBe(free.machineId);

    for (const w of [a, b]) w.child.send('finish');
    const [aDone, bDone] = await waitFor('both finished', Promise.all([a.generated, b.generated]));
    expect(aDone.failed).toBeUndefined();
    expect(bDone.failed).toBeUndefined();
    await waitFor('both exited', Promise.all([a.exited, b.exited]));

    const aIds = readIds(a.file);
    const bIds = readIds(b.file);
    const all = [...aIds, ...bIds];
    expect(new Set(all).size).toBe(all.length);

    const parsed = (ids: string[]) => ids.map((id) => ({ id, ...CosIdGenerator.parse(id) }));
    const aParsed = parsed(aIds);
    const bParsed = parsed(bIds);
    expect(bParsed.every((s) => s.machineId === aStarted.machineId)).toBe(true);
    const aOld = aParsed.filter((s) => s.machineId === aStarted.machineId);
    const aNew = aParsed.filter((s) => s.machineId === free.machineId);
    expect(aOld.length + aNew.length).toBe(aParsed.length); // no third machine ID
    expect(aNew.length).toBeGreaterThanOrEqual(20_000);
    const lastOld = aOld.reduce((max, s) => Math.max(max, s.timestamp), -Infinity);
    const firstB = bParsed.reduce((min, s) => Math.min(min, s.timestamp), Infinity);
    expect(lastOld).toBeLessThan(firstB);
    // A's IDs keep increasing across the move (the new machine ID starts after the old one's last).
    const unordered = aIds.filter((id, k) => k > 0 && !(id > aIds[k - 1]));
    expect(unordered).toEqual([]);
  }, 180_000);
});
