// The multi-process case run beside the machine-ID contract on every store of this repository:
// three OS processes (test/id-generator/workers, on the BUILT library) hold three distinct
// machine IDs and issue distinct IDs. Not part of the published contract: it needs this
// repository's worker script.
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { DistributorContractTarget } from '@ddd-kit/id-generator/testing';
import { uniqueName } from '../../support/servers.js';
import { checkIds, ensureBuilt, spawnWorker, type WorkerBackend } from './id-workers.js';

/** A contract target, and how a child process reaches the same store. */
export type ProcessesTarget = DistributorContractTarget & { worker: WorkerBackend };

export function describeMachineIdProcesses(label: string, setup: () => Promise<ProcessesTarget>): void {
  describe(`MachineIdDistributor across OS processes: ${label}`, () => {
    const children: ChildProcess[] = [];
    let target: ProcessesTarget;
    let dir = '';
    const namespace = uniqueName('machine_processes');

    beforeAll(async () => {
      target = await setup();
      dir = mkdtempSync(join(tmpdir(), 'ddd-kit-contract-'));
    });

    afterAll(async () => {
      for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
      await target?.cleanup(namespace);
      await target?.close();
    });

    it('three application processes hold three distinct machine IDs and issue distinct IDs', async () => {
      ensureBuilt();
      // Distinct IDs across processes follow from distinct machine IDs held at the same time
      // (checked below); each file is also checked for order and duplicates. More IDs per process
      // prove nothing more: 20,000 already fill several milliseconds of each generator.
      const count = 20_000;
      const workers = [0, 1, 2].map((i) =>
        spawnWorker(
          `p${i}`,
          {
            backend: target.worker,
            namespace,
            file: join(dir, `p${i}.ids`),
            machineBits: 2,
            safeGuardMs: 2_000,
            guardIntervalMs: 200,
            mode: 'count',
            count,
            chunk: 5_000,
            pauseMs: 0,
          },
          children,
        ),
      );
      const started = await Promise.all(workers.map((w) => w.started));
      expect(new Set(started.map((s) => s.machineId)).size).toBe(3);
      expect(new Set(started.map((s) => s.instanceId)).size).toBe(3);
      await Promise.all(workers.map((w) => w.generated));
      workers.forEach((w) => w.child.send('finish'));
      await Promise.all(workers.map((w) => w.closed));
      const result = checkIds(workers.map((w, i) => ({ file: w.file, machineIds: [started[i].machineId] })));
      expect(result.problems).toEqual([]);
      expect(result.total).toBe(3 * count);
      expect(result.distinct).toBe(3 * count);
      expect((await target.released(namespace)).sort()).toEqual(started.map((s) => s.machineId).sort());
    }, 120_000);
  });
}
