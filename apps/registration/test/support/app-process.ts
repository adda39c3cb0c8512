import { spawn, type ChildProcess } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { assertBuilt } from '../../../../test/support/built.js';
import { waitFor } from '../../../../test/support/wait.js';

// The built entry point as an operator runs it (`npm test` builds first).
const MAIN = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'dist', 'main.js');

export interface AppExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** One OS process of the built app: its output so far, and its exit. */
export class AppProcess {
  private readonly child: ChildProcess;
  private text = '';
  readonly exited: Promise<AppExit>;

  constructor(env: Record<string, string | undefined>) {
    // The built app and the built libraries it imports, never older than their sources.
    assertBuilt('apps/registration');
    this.child = spawn(process.execPath, [MAIN], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child.stdout!.on('data', (d) => (this.text += d));
    this.child.stderr!.on('data', (d) => (this.text += d));
    this.exited = new Promise((resolve, reject) => {
      this.child.on('error', reject);
      this.child.on('exit', (code, signal) => resolve({ code, signal }));
    });
  }

  get output(): string {
    return this.text;
  }

  get running(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Resolves once `check()` holds; fails at once when the process exits first, with what it printed. */
  async waitFor(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 45_000): Promise<void> {
    const exitedFirst = this.exited.then((exit) => {
      throw new Error(`the app exited (${JSON.stringify(exit)}) before ${what}:\n${this.text}`);
    });
    // Promise.race handles whichever settles later, so neither is an unhandled rejection.
    await Promise.race([waitFor(what, check, { timeoutMs }), exitedFirst]);
  }

  /** Waits until `url/health` answers. */
  waitForHealth(url: string): Promise<void> {
    return this.waitFor(
      `${url}/health`,
      async () => (await fetch(`${url}/health`).catch(() => undefined))?.ok === true,
    );
  }

  /** SIGKILL: the process dies at once, in the middle of whatever it was doing. */
  async kill(): Promise<AppExit> {
    if (this.running) this.child.kill('SIGKILL');
    return this.exited;
  }

  /** SIGTERM (a graceful shutdown), SIGKILL if it has not exited after `graceMs`. */
  async stop(graceMs = 10_000): Promise<AppExit> {
    if (this.running) {
      this.child.kill('SIGTERM');
      setTimeout(() => this.running && this.child.kill('SIGKILL'), graceMs).unref();
    }
    return this.exited;
  }
}
