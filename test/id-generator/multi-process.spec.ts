// The proof a unit test cannot give: several OS processes, each an application instance with
// IdGeneratorModule and a RedisMachineIdDistributor on real Redis, hold distinct machine IDs and
// issue distinct IDs, including when one is killed (SIGKILL) mid-run and replaced by a new
// instance that must first wait for the dead one's ID to be reclaimed (safeGuardMs).
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFileSync, fork, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { MachineIdOverflowError, Radix62, RedisMachineIdDistributor } from '@ddd-kit/id-generator';
import { redisUrl, uniqueName } from '../support/servers.js';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..');
const WORKER = join(here, 'workers', 'global-id.worker.mjs');
const IDS_PER_PROCESS = 1_000_000;
const MACHINE_BITS = 2; // exactly 4 machine IDs: a fifth instance must wait for a reclaim
const SAFE_GUARD_MS = 2_500;
const GUARD_INTERVAL_MS = 250;

interface Started {
  machineId: number;
  instanceId: string;
  acquiredAt: number;
  overflowAttempts: number;
}

interface Worker {
  child: ChildProcess;
  file: string;
  started: Promise<Started>;
  generated: Promise<void>;
  closed: Promise<void>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  progress: number;
  onProgress?: (written: number) => void;
}

/** The workers import the built library: build it when dist/ is older than src/. */
function ensureBuilt(): void {
  const newest = (dir: string): number =>
    readdirSync(dir, { withFileTypes: true }).reduce((max, entry) => {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) return Math.max(max, newest(path));
      return entry.name.endsWith('.ts') && !entry.name.endsWith('.spec.ts') ? Math.max(max, statSync(path).mtimeMs) : max;
    }, 0);
  const dist = join(root, 'libs', 'id-generator', 'dist', 'index.js');
  let built = 0;
  try {
    built = statSync(dist).mtimeMs;
  } catch {
    built = 0;
  }
  if (built < newest(join(root, 'libs', 'id-generator', 'src'))) {
    execFileSync(process.execPath, [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', join(root, 'libs', 'id-generator', 'tsconfig.build.json')], {
      cwd: root,
      stdio: 'inherit',
    });
  }
}

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

  function spawnWorker(namespace: string, name: string, pauseMs: number): Worker {
    const file = join(dir, `${name}.ids`);
    const config = { namespace, file, count: IDS_PER_PROCESS, chunk: 25_000, pauseMs, machineBits: MACHINE_BITS, safeGuardMs: SAFE_GUARD_MS, guardIntervalMs: GUARD_INTERVAL_MS };
    const child = fork(WORKER, [JSON.stringify(config)], { cwd: root, execArgv: [], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    children.push(child);
    const waitFor = <T>(type: string, map: (m: any) => T): Promise<T> =>
      new Promise((resolve, reject) => {
        child.on('message', (m: any) => m?.type === type && resolve(map(m)));
        child.once('exit', (code, signal) => reject(new Error(`worker ${name} exited (${code ?? signal}) before "${type}"`)));
      });
    const worker: Worker = {
      child,
      file,
      progress: 0,
      started: waitFor('started', (m) => m as Started),
      generated: waitFor('generated', () => undefined),
      closed: waitFor('closed', () => undefined),
      exited: new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal }))),
    };
    child.on('message', (m: any) => {
      if (m?.type === 'progress') {
        worker.progress = m.written;
        worker.onProgress?.(m.written);
      }
    });
    // Rejections of promises nobody awaits (a killed worker's) must not fail the run.
    for (const p of [worker.started, worker.generated, worker.closed]) p.catch(() => undefined);
    return worker;
  }

  /**
   * Reads every ID file; checks within each that IDs strictly increase and carry the worker's
   * machine ID, and across all that no ID repeats. Returns the total count.
   */
  function checkIds(files: Array<{ file: string; machineIds: number[] }>): { total: number; distinct: number; problems: string[] } {
    const all = new Set<string>();
    const problems: string[] = [];
    let total = 0;
    for (const { file, machineIds } of files) {
      const machines = new Set(machineIds.map((m) => Radix62.encode(m, 4)));
      const lines = readFileSync(file, 'latin1').split('\n');
      lines.pop(); // after the last newline
      let previous = '';
      for (const id of lines) {
        if (id.length !== 15) problems.push(`${file}: malformed ${id}`);
        if (!machines.has(id.slice(8, 12))) problems.push(`${file}: ${id} has machine ${id.slice(8, 12)}`);
        if (!(id > previous)) problems.push(`${file}: ${id} after ${previous}`);
        previous = id;
        all.add(id);
        total++;
        if (problems.length > 10) return { total, distinct: all.size, problems };
      }
    }
    return { total, distinct: all.size, problems };
  }

  it(
    `4 processes hold 4 distinct machine IDs and issue ${4 * IDS_PER_PROCESS} distinct IDs`,
    async () => {
      const namespace = uniqueName('mp');
      namespaces.push(namespace);
      const workers = [0, 1, 2, 3].map((i) => spawnWorker(namespace, `plain-${i}`, 0));
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
    },
    90_000,
  );

  it(
    'one process killed (SIGKILL) mid-run and restarted under a new instance ID: its machine ID is reclaimed only after safeGuardMs, no ID repeats',
    async () => {
      const namespace = uniqueName('mp-kill');
      namespaces.push(namespace);
      const keys = new RedisMachineIdDistributor(redis).keys(namespace);
      // Paced, so that the run lasts long enough to be interrupted.
      const workers = [0, 1, 2, 3].map((i) => spawnWorker(namespace, `kill-${i}`, 30));
      const started = await Promise.all(workers.map((w) => w.started));
      expect(new Set(started.map((s) => s.machineId)).size).toBe(4);

      const victim = workers[1];
      await new Promise<void>((resolve) => {
        victim.onProgress = (written) => written >= IDS_PER_PROCESS * 0.3 && resolve();
      });
      victim.child.kill('SIGKILL');
      const { signal } = await victim.exited;
      expect(signal).toBe('SIGKILL');
      // Its last heartbeat (server time), which can no longer change: its deadline less its safeGuardMs.
      const lastBeat = Number(await redis.zscore(keys.deadlines, String(started[1].machineId))) - SAFE_GUARD_MS;
      const killedProgress = victim.progress;
      expect(killedProgress).toBeLessThan(IDS_PER_PROCESS);

      // Within safeGuardMs of its last heartbeat, the dead instance's ID is not handed out.
      const probe = new RedisMachineIdDistributor(redis, { safeGuardMs: SAFE_GUARD_MS, guardIntervalMs: GUARD_INTERVAL_MS });
      const probedAt = Date.now();
      await expect(probe.distribute({ namespace, machineBits: MACHINE_BITS, instanceId: 'probe' })).rejects.toThrow(MachineIdOverflowError);
      expect(probedAt - lastBeat).toBeLessThan(SAFE_GUARD_MS);

      const replacement = spawnWorker(namespace, 'replacement', 0);
      const restarted = await replacement.started;
      expect(restarted.instanceId).not.toBe(started[1].instanceId);
      expect(restarted.machineId).toBe(started[1].machineId); // the only ID that could be reclaimed
      expect(restarted.acquiredAt - lastBeat).toBeGreaterThanOrEqual(SAFE_GUARD_MS); // not before safeGuardMs of silence
      // The survivors were alive all along: none of them lost its ID.
      for (const i of [0, 2, 3]) expect(await redis.hget(keys.owners, String(started[i].machineId))).toBe(started[i].instanceId);

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
    },
    90_000,
  );
});
