import { type ChildProcess, fork } from 'node:child_process';
import { join } from 'node:path';
import { waitFor } from '../../support/wait.js';

export const WORKERS_DIR = join(process.cwd(), 'test', 'prepare-key-backends', 'workers');

interface Message {
  type: string;
  [field: string]: unknown;
}

const running = new Set<WorkerProcess>();

/**
 * A worker OS process (a plain .mjs script importing the built library) talking to the test
 * over IPC. Each message is kept until asked for, so none is missed; an exit before the
 * expected message fails the wait with the exit status instead of hanging.
 */
export class WorkerProcess {
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  private readonly child: ChildProcess;
  private readonly inbox: Message[] = [];
  private readonly waiting: Array<() => void> = [];
  private exitStatus: string | undefined;

  constructor(script: string, args: unknown) {
    this.child = fork(join(WORKERS_DIR, script), [JSON.stringify(args)], {
      execArgv: [],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    running.add(this);
    this.child.on('message', (message: Message) => {
      this.inbox.push(message);
      this.wake();
    });
    // 'close', not 'exit': it comes after the IPC channel has delivered every message, so a
    // large last message is never reported as missing.
    this.exited = new Promise((resolve) => {
      this.child.once('close', (code, signal) => {
        running.delete(this);
        this.exitStatus = signal ?? `code ${code}`;
        this.wake();
        resolve({ code, signal });
      });
    });
  }

  get pid(): number {
    return this.child.pid!;
  }

  send(message: Message): void {
    this.child.send(message);
  }

  /** The next message of `type`; rejects when the worker exits first. */
  message<T extends Message>(type: string, timeoutMs?: number): Promise<T> {
    const arrived = new Promise<T>((resolve, reject) => {
      const look = () => {
        const index = this.inbox.findIndex((m) => m.type === type);
        if (index >= 0) resolve(this.inbox.splice(index, 1)[0] as T);
        else if (this.exitStatus !== undefined)
          reject(new Error(`worker ${this.pid} exited (${this.exitStatus}) before sending '${type}'`));
        else this.waiting.push(look);
      };
      look();
    });
    return waitFor(`worker ${this.pid} to send '${type}'`, arrived, timeoutMs === undefined ? {} : { timeoutMs });
  }

  kill(signal: NodeJS.Signals): void {
    this.child.kill(signal);
  }

  private wake(): void {
    for (const resolve of this.waiting.splice(0)) resolve();
  }
}

/** Kills what a failed test left running; call in afterAll. */
export async function killRunningWorkers(): Promise<void> {
  await Promise.all(
    [...running].map((worker) => {
      worker.kill('SIGKILL');
      return worker.exited;
    }),
  );
}
