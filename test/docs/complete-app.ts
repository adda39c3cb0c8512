// A docs page's complete app as a child process, compiled and started the way
// the docs' specs do: its `ts file=…` blocks transpiled into a scratch directory that
// sees the repository's node_modules (the built libraries), then `node main.js` (or another block).
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import ts from 'typescript';
import { freePort } from '../support/server-provider.js';
import { waitFor } from '../support/wait.js';
import { root } from './markdown-files.js';

export interface CompleteApp {
  base: string;
  child: ChildProcess;
  output: () => string;
  /** How the process ended: its exit code, or the signal that ended it. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Removes the scratch directory (the process must have ended). */
  remove: () => Promise<void>;
}

/** `main`: the block (```ts file=<main>.ts) to run, when the page holds more than one app. */
export async function startCompleteApp(
  markdown: string,
  env: Record<string, string>,
  main = 'main',
): Promise<CompleteApp> {
  const scratch = await mkdtemp(join(tmpdir(), 'ddd-kit-app-'));
  await symlink(join(root, 'node_modules'), join(scratch, 'node_modules'), 'dir');
  await writeFile(join(scratch, 'package.json'), JSON.stringify({ type: 'module' }));
  const text = readFileSync(join(root, markdown), 'utf8');
  for (const [, name, source] of text.matchAll(/^```ts file=(\S+)\.ts\n([\s\S]*?)\n```$/gm)) {
    const js = ts.transpileModule(source!, {
      compilerOptions: {
        module: ts.ModuleKind.ESNext,
        target: ts.ScriptTarget.ES2022,
        experimentalDecorators: true,
        emitDecoratorMetadata: true,
      },
    }).outputText;
    await writeFile(join(scratch, `${name}.js`), js);
  }
  const port = await freePort();
  const child = spawn(process.execPath, [`${main}.js`], {
    cwd: scratch,
    env: { ...process.env, ...env, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  return {
    base: `http://127.0.0.1:${port}`,
    child,
    output: () => output,
    exited,
    remove: () => rm(scratch, { recursive: true, force: true }),
  };
}

/** Waits for readiness 200 and resolves its body; fails with what the app printed should it exit first. */
export async function waitUntilReady(app: CompleteApp): Promise<Record<string, unknown>> {
  return waitFor(`readiness 200 of the app at ${app.base}`, async () => {
    if (app.child.exitCode !== null) throw new Error(`the app exited (${app.child.exitCode}):\n${app.output()}`);
    const response = await fetch(`${app.base}/health/ready`).catch(() => undefined);
    return response?.status === 200 ? ((await response.json()) as Record<string, unknown>) : undefined;
  });
}
