// Nest applications with nestjs-cls run in a child Node process, driven over IPC: nestjs-cls
// is a CommonJS package that requires the ES-module-only Nest 12, which Node (20.19+) does
// natively but Jest's module loader on Node 20 cannot. The child runs the built packages
// (dist), exactly as an application would; the test drives it and checks the database itself.
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { assertBuilt } from './built.js';

export interface ChildError extends Error {
  code?: string;
}

export class ChildApp {
  private readonly pending = new Map<number, { resolve: (value: any) => void; reject: (error: Error) => void }>();
  private next = 0;
  private stderr = '';

  private constructor(private readonly child: ChildProcess) {}

  /**
   * Starts `script` (an .mjs file) with `env` added and resolves once it reported ready. The
   * script runs the built `packages` (and the ddd-kit packages they depend on): a missing or
   * stale build fails here, saying so.
   */
  static async start(
    script: string | URL,
    env: Record<string, string>,
    packages: string[] = ['libs/transactional-adapter-pg'],
  ): Promise<ChildApp> {
    const path = script instanceof URL ? fileURLToPath(script) : script;
    assertBuilt(...packages);
    const child = fork(path, [], { env: { ...process.env, ...env }, stdio: ['ignore', 'inherit', 'pipe', 'ipc'] });
    const app = new ChildApp(child);
    child.stderr!.on('data', (chunk: Buffer) => void (app.stderr += chunk.toString()));
    await new Promise<void>((resolve, reject) => {
      const onExit = (code: number | null) =>
        reject(new Error(`${path} exited (${code}) before it was ready:\n${app.stderr}`));
      child.once('exit', onExit);
      child.on(
        'message',
        (message: {
          ready?: boolean;
          id?: number;
          ok?: boolean;
          value?: unknown;
          error?: { name: string; message: string; code?: string };
        }) => {
          if (message.ready) {
            child.removeListener('exit', onExit);
            resolve();
            return;
          }
          const waiting = app.pending.get(message.id!);
          if (waiting === undefined) return;
          app.pending.delete(message.id!);
          if (message.ok) waiting.resolve(message.value);
          else
            waiting.reject(
              Object.assign(new Error(message.error!.message), {
                name: message.error!.name,
                code: message.error!.code,
              }),
            );
        },
      );
    });
    child.on('exit', (code) => {
      for (const waiting of app.pending.values())
        waiting.reject(new Error(`the child app exited (${code}):\n${app.stderr}`));
      app.pending.clear();
    });
    return app;
  }

  /** Runs the child's operation `op` and resolves with what it returned (or rejects with what it threw). */
  call<T = unknown>(op: string, ...args: unknown[]): Promise<T> {
    const id = ++this.next;
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.child.send({ id, op, args });
    });
  }

  /** What the child wrote to stderr (Nest's logger, for one). */
  get errors(): string {
    return this.stderr;
  }

  /**
   * Closes the Nest application (shutdown hooks included) and waits for the process to exit.
   * A child that has not exited after `ms` is killed and this rejects: a hang is a failure,
   * and must not keep the test run alive.
   */
  async stop(ms = 15_000): Promise<number | null> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return this.child.exitCode;
    const exited = new Promise<number | null>((resolve) => this.child.once('exit', resolve));
    this.child.send({ id: 0, op: '__stop', args: [] });
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), ms)));
    const outcome = await Promise.race([exited, late]);
    clearTimeout(timer);
    if (outcome !== 'late') return outcome;
    this.child.kill('SIGKILL');
    await exited;
    throw new Error(`the child app did not exit within ${ms} ms of being stopped (killed):\n${this.stderr}`);
  }
}
