// The proof a unit test cannot give: several OS processes, each an application instance with
// IdGeneratorModule and a RedisMachineIdDistributor on real Redis, hold distinct machine IDs and
// issue distinct IDs, including when one is killed (SIGKILL) mid-run and replaced by a new
// instance that must first wait for the dead one's ID to be reclaimed (safeGuardMs).
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { MachineIdOverflowError, RedisMachineIdDistributor } from '@ddd-kit/id-generator';
import { redisUrl, uniqueName } from '../support/servers.js';
import { waitFor } from '../support/wait.js';
import { checkIds, ensureBuilt, progressUntil, spawnWorker, type Worker } from './support/id-workers.js';

// Distinct IDs across processes rest on distinct machine IDs held at the same time (checked
// directly) and on each generator's own order (checked per file); 250,000 IDs per process already
// run each generator through tens of milliseconds and full sequences, so a longer run proves
// nothing more. The kill case needs the run to last long enough to be interrupted: it is paced.
const IDS_PER_PROCESS = 250_000;
const MACHINE_BITS = 2; // exactly 4 machine IDs: a fifth instance must wait for a reclaim
const SAFE_GUARD_MS = 2_500;
const GUARD_INTERVAL_MS = 250;

describe('global IDs across OS processes on real Redis', () => {
  let redis: Redis;
  let dir: string;
  const namespaces: string[] = [];
  const children: ChildProcess[] = [];

  beforeAll(() => {
    ensureBuilt();
    redis = new Redis(redisUrl());
    dir = mkdtempSync(join(tmpdir(), 'ddd-kit-ids-'));
  }, 120_000);

  afterAll(async () => {
    for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    const distributor = new RedisMachineIdDistributor(redis);
    for (const ns of namespaces) await Promise.all(Object.values(distributor.keys(ns)).map((k) => redis.del(k)));
    redis.disconnect();
    rmSync(dir, { recursive: true, force: true });
  });

  function start(namespace: string, name: string, pauseMs: number): Worker {
    return spawnWorker(
      name,
      {
        backend: { kind: 'redis', url: redisUrl() },
        namespace,
        file: join(dir, `${name}.ids`),
        mode: 'count',
        count: IDS_PER_PROCESS,
        chunk: 10_000,
        pauseMs,
        machineBits: MACHINE_BITS,
        safeGuardMs: SAFE_GUARD_MS,
        guardIntervalMs: GUARD_INTERVAL_MS,
      },
      children,
    );
  }

  it(`4 processes hold 4 distinct machine IDs and issue ${4 * IDS_PER_PROCESS} distinct IDs`, async () => {
    const namespace = uniqueName('mp');
    namespaces.push(namespace);
    const workers = [0, 1, 2, 3].map((i) => start(namespace, `plain-${i}`, 0));
    const started = await Promise.all(workers.map((w) => w.started));
    expect(new Set(started.map((s) => s.machineId)).size).toBe(4);
    expect(new Set(started.map((s) => s.instanceId)).size).toBe(4);
    await Promise.all(workers.map((w) => w.generated));
    // All four are alive together until here; now they shut down and give their IDs back.
    workers.forEach((w) => w.child.send('finish'));
    await Promise.all(workers.map((w) => w.closed));
    await Promise.all(workers.map((w) => w.exited));

    const result = checkIds(workers.map((w, i) => ({ file: w.file, machineIds: [started[i].machineId] })));
    expect(result.problems).toEqual([]);
    expect(result.total).toBe(4 * IDS_PER_PROCESS);
    expect(result.distinct).toBe(4 * IDS_PER_PROCESS);
    const keys = new RedisMachineIdDistributor(redis).keys(namespace);
    expect(await redis.hlen(keys.owners)).toBe(0);
    expect((await redis.zrange(keys.released, 0, -1)).sort()).toEqual(started.map((s) => String(s.machineId)).sort());
  }, 90_000);

  it('one process killed (SIGKILL) mid-run and restarted under a new instance ID: its machine ID is reclaimed only after safeGuardMs, no ID repeats', async () => {
    const namespace = uniqueName('mp-kill');
    namespaces.push(namespace);
    const keys = new RedisMachineIdDistributor(redis).keys(namespace);
    // The victim is paced (25 chunks, 120 ms apart): killed at 30%, it has seconds of run left,
    // so a test process slow to react still kills it mid-run. The others need no pacing: they
    // hold their IDs until told to finish.
    const workers = [0, 1, 2, 3].map((i) => start(namespace, `kill-${i}`, i === 1 ? 120 : 0));
    const started = await Promise.all(workers.map((w) => w.started));
    expect(new Set(started.map((s) => s.machineId)).size).toBe(4);

    const victim = workers[1];
    await waitFor(
      'the victim 30% through its IDs',
      progressUntil(victim, (progress) => progress.written >= IDS_PER_PROCESS * 0.3),
    );
    victim.child.kill('SIGKILL');
    const { signal } = await victim.exited;
    expect(signal).toBe('SIGKILL');
    // Its last heartbeat (server time), which can no longer change: its deadline less its safeGuardMs.
    const lastBeat = Number(await redis.zscore(keys.deadlines, String(started[1].machineId))) - SAFE_GUARD_MS;
    const killedProgress = victim.progress.written;
    expect(killedProgress).toBeLessThan(IDS_PER_PROCESS);

    // Within safeGuardMs of its last heartbeat, the dead instance's ID is not handed out.
    const probe = new RedisMachineIdDistributor(redis, {
      safeGuardMs: SAFE_GUARD_MS,
      guardIntervalMs: GUARD_INTERVAL_MS,
    });
    const probedAt = Date.now();
    await expect(probe.distribute({ namespace, machineBits: MACHINE_BITS, instanceId: 'probe' })).rejects.toThrow(
      MachineIdOverflowError,
    );
    expect(probedAt - lastBeat).toBeLessThan(SAFE_GUARD_MS);

    const replacement = start(namespace, 'replacement', 0);
    const restarted = await replacement.started;
    expect(restarted.instanceId).not.toBe(started[1].instanceId);
    expect(restarted.machineId).toBe(started[1].machineId); // the only ID that could be reclaimed
    expect(restarted.acquiredAt - lastBeat).toBeGreaterThanOrEqual(SAFE_GUARD_MS); // not before safeGuardMs of silence
    // The survivors were alive all along: none of them lost its ID.
    for (const i of [0, 2, 3])
      expect(await redis.hget(keys.owners, String(started[i].machineId))).toBe(started[i].instanceId);

    await replacement.generated;
    const survivors = [workers[0], workers[2], workers[3]];
    await Promise.all(survivors.map((w) => w.generated));
    [...survivors, replacement].forEach((w) => w.child.send('finish'));
    await Promise.all([...survivors, replacement].map((w) => w.closed));
    await Promise.all([...survivors, replacement].map((w) => w.exited));

    const result = checkIds([
      { file: workers[0].file, machineIds: [started[0].machineId] },
      { file: victim.file, machineIds: [started[1].machineId] },
      { file: workers[2].file, machineIds: [started[2].machineId] },
      { file: workers[3].file, machineIds: [started[3].machineId] },
      { file: replacement.file, machineIds: [restarted.machineId] },
    ]);
    expect(result.problems).toEqual([]);
    // Everything the killed process wrote counts (at least what it reported).
    expect(result.total).toBeGreaterThanOrEqual(4 * IDS_PER_PROCESS + killedProgress);
    expect(result.distinct).toBe(result.total);
    expect(await redis.hlen(keys.owners)).toBe(0);
  }, 90_000);
});
