// OS processes that each run IdGeneratorModule (test/id-generator/workers/global-id.worker.mjs)
// against the BUILT library, and the checks every multi-process test runs on the IDs they wrote.
import { fork, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CosIdGenerator, Radix62 } from '@ddd-kit/id-generator';
import { assertBuilt } from '../../support/built.js';

const here = dirname(fileURLToPath(import.meta.url));
export const root = join(here, '..', '..', '..');
const WORKER = join(here, '..', 'workers', 'global-id.worker.mjs');

export type WorkerBackend =
  | { kind: 'redis'; url: string }
  | { kind: 'redis-cluster'; nodes: Array<{ host: string; port: number }> }
  | { kind: 'postgres'; url: string; schema: string };

export interface WorkerConfig {
  backend: WorkerBackend;
  namespace: string;
  file: string;
  machineBits: number;
  safeGuardMs: number;
  guardIntervalMs: number;
  mode: 'count' | 'continuous';
  chunk: number;
  /** mode 'count' */
  count?: number;
  pauseMs?: number;
  /** Let the worker's Nest logger print (lease messages). */
  log?: boolean;
}

export interface Started {
  machineId: number;
  instanceId: string;
  acquiredAt: number;
  overflowAttempts: number;
}

export interface Generated {
  written: number;
  errors: string[];
  failed?: string;
}

export interface Progress {
  written: number;
  machineId?: number;
  errors?: number;
}

export interface Worker {
  child: ChildProcess;
  file: string;
  started: Promise<Started>;
  generated: Promise<Generated>;
  closed: Promise<void>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  progress: Progress;
  onProgress?: (progress: Progress) => void;
}

/** The workers import the built library: it must be built from the current sources. */
export function ensureBuilt(): void {
  assertBuilt('libs/id-generator');
}

export function spawnWorker(name: string, config: WorkerConfig, children: ChildProcess[]): Worker {
  const child = fork(WORKER, [JSON.stringify(config)], {
    cwd: root,
    execArgv: [],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  children.push(child);
  /** The worker's first message of `type`; rejects if the worker exits before sending it. */
  const message = <T>(type: string, map: (m: any) => T): Promise<T> =>
    new Promise((resolve, reject) => {
      child.on('message', (m: any) => m?.type === type && resolve(map(m)));
      child.once('exit', (code, signal) =>
        reject(new Error(`worker ${name} exited (${code ?? signal}) before "${type}"`)),
      );
    });
  const worker: Worker = {
    child,
    file: config.file,
    progress: { written: 0 },
    started: message('started', (m) => m as Started),
    generated: message('generated', (m) => m as Generated),
    closed: message('closed', () => undefined),
    exited: new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal }))),
  };
  child.on('message', (m: any) => {
    if (m?.type === 'progress') {
      worker.progress = m;
      worker.onProgress?.(m);
    }
  });
  // Rejections of promises nobody awaits (a killed worker's) must not fail the run.
  for (const p of [worker.started, worker.generated, worker.closed]) p.catch(() => undefined);
  return worker;
}

/** Resolves once `condition` holds for a progress report of the worker. */
export function progressUntil(worker: Worker, condition: (progress: Progress) => boolean): Promise<Progress> {
  return new Promise((resolve) => {
    if (condition(worker.progress)) return resolve(worker.progress);
    worker.onProgress = (progress) => condition(progress) && resolve(progress);
  });
}

/** The IDs a worker wrote, in order. */
export function readIds(file: string): string[] {
  let text: string;
  try {
    text = readFileSync(file, 'latin1');
  } catch {
    return [];
  }
  const lines = text.split('\n');
  lines.pop(); // after the last newline
  return lines;
}

/**
 * Checks every ID file: within each, IDs strictly increase and carry one of the worker's machine
 * IDs; across all, no ID repeats. Returns the total and the problems found (a few at most).
 */
export function checkIds(files: Array<{ file: string; machineIds: number[] }>): {
  total: number;
  distinct: number;
  problems: string[];
} {
  const all = new Set<string>();
  const problems: string[] = [];
  let total = 0;
  for (const { file, machineIds } of files) {
    const machines = new Set(machineIds.map((m) => Radix62.encode(m, 4)));
    let previous = '';
    for (const id of readIds(file)) {
      if (id.length !== CosIdGenerator.ID_LENGTH) problems.push(`${file}: malformed ${id}`);
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
