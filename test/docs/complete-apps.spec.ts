// The two complete apps the root README links (docs/postgresql.md, docs/redis-mongodb.md) run as
// written: their `ts file=…` blocks are compiled as a user's build would, started with
// `node main.js` against real servers (npm test builds the libraries first), and then answer:
// readiness 200 with every entry up, a product added, its SKU a 409 the second time, the read
// model fed by the outbox (PostgreSQL), and SIGTERM ends the process cleanly.
import { afterAll, describe, expect, it } from '@jest/globals';
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import ts from 'typescript';
import { freePort } from '../support/server-provider.js';
import { mongoUri, postgresSchema, redisUrl, uniqueName } from '../support/servers.js';
import { waitFor } from '../support/wait.js';
import { root } from './markdown-files.js';

/** Every `ts file=name.ts` block of a Markdown file, by file name. */
function blocksOf(markdown: string): Map<string, string> {
  const text = readFileSync(join(root, markdown), 'utf8');
  return new Map([...text.matchAll(/^```ts file=(\S+)\.ts\n([\s\S]*?)\n```$/gm)].map((m) => [m[1], m[2]]));
}

interface Running {
  base: string;
  child: ChildProcess;
  output: () => string;
}

async function start(markdown: string, env: Record<string, string>, scratchDirs: string[]): Promise<Running> {
  const scratch = await mkdtemp(join(tmpdir(), 'ddd-kit-app-'));
  scratchDirs.push(scratch);
  await symlink(join(root, 'node_modules'), join(scratch, 'node_modules'), 'dir');
  await writeFile(join(scratch, 'package.json'), JSON.stringify({ type: 'module' }));
  const blocks = blocksOf(markdown);
  expect(blocks.has('main')).toBe(true);
  for (const [name, source] of blocks) {
    const js = ts.transpileModule(source, {
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
  const child = spawn(process.execPath, ['main.js'], {
    cwd: scratch,
    env: { ...process.env, ...env, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  return { base: `http://127.0.0.1:${port}`, child, output: () => output };
}

/** Should the app have exited, the wait fails with what it printed instead of a refused fetch. */
function assertRunning(app: Running): void {
  if (app.child.exitCode !== null) throw new Error(`the app exited (${app.child.exitCode}):\n${app.output()}`);
}

const post = (app: Running, path: string, body: unknown) =>
  fetch(`${app.base}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });

async function ready(app: Running): Promise<Record<string, unknown>> {
  return waitFor('readiness 200', async () => {
    assertRunning(app);
    const response = await fetch(`${app.base}/health/ready`);
    return response.status === 200 ? ((await response.json()) as Record<string, unknown>) : undefined;
  });
}

/**
 * SIGTERM, then how the process ended: Nest's shutdown hooks close the app and re-raise the
 * signal, so a clean stop ends by SIGTERM (or code 0), within 15 s, with nothing on stderr
 * that says otherwise; SIGKILL means it hung.
 */
async function stop(app: Running): Promise<string> {
  if (app.child.exitCode !== null) return `exited early with ${app.child.exitCode}`;
  const exited = new Promise<string>((resolve) =>
    app.child.once('exit', (code, signal) =>
      resolve(code === 0 || signal === 'SIGTERM' ? 'clean' : `${code ?? signal}`),
    ),
  );
  app.child.kill('SIGTERM');
  const timer = setTimeout(() => app.child.kill('SIGKILL'), 15_000);
  try {
    return await exited;
  } finally {
    clearTimeout(timer);
  }
}

/** Both apps' readiness: reservations, the machine-ID lease, the stores and the outbox. */
const EVERY_ENTRY_UP = {
  status: 'ok',
  details: {
    'prepare-key': { status: 'up' },
    'machine-id': { status: 'up' },
    repository: { status: 'up' },
    outbox: { status: 'up' },
  },
};

describe('the complete apps the root README links', () => {
  const scratchDirs: string[] = [];
  const cleanups: Array<() => Promise<void>> = [];

  afterAll(async () => {
    for (const cleanup of cleanups) await cleanup();
    for (const dir of scratchDirs) await rm(dir, { recursive: true, force: true });
  });

  it('docs/postgresql.md: ready, a product in one transaction, its SKU taken, the read model fed, a clean stop', async () => {
    const schema = await postgresSchema('docs_postgres_app');
    cleanups.push(schema.drop);
    const app = await start('docs/postgresql.md', { DATABASE_URL: schema.url }, scratchDirs);
    try {
      expect(await ready(app)).toMatchObject(EVERY_ENTRY_UP);
      const added = await post(app, '/products', { sku: 'SKU-1', price: 250 });
      expect(added.status).toBe(201);
      const { id } = (await added.json()) as { id: string };
      expect(typeof id).toBe('string');
      expect((await post(app, '/products', { sku: 'SKU-1', price: 1 })).status).toBe(409);
      const price = await waitFor('the read model', async () => {
        assertRunning(app);
        const response = await fetch(`${app.base}/prices/${encodeURIComponent(id)}`);
        return response.status === 200 ? ((await response.json()) as { price: number }) : undefined;
      });
      expect(price).toEqual({ price: 250 });
    } finally {
      expect(await stop(app)).toBe('clean');
    }
  }, 120_000);

  it('docs/redis-mongodb.md: ready, a product, its SKU taken, a clean stop', async () => {
    const app = await start(
      'docs/redis-mongodb.md',
      {
        REDIS_URL: redisUrl(),
        MONGODB_URI: withDatabase(mongoUri(), uniqueName('docs_redis_mongo_app')),
      },
      scratchDirs,
    );
    try {
      expect(await ready(app)).toMatchObject(EVERY_ENTRY_UP);
      // The app's key prefix is fixed, so the SKU is unique to this run.
      const sku = uniqueName('sku');
      const added = await post(app, '/products', { sku });
      expect(added.status).toBe(201);
      expect(typeof ((await added.json()) as { id: string }).id).toBe('string');
      expect((await post(app, '/products', { sku })).status).toBe(409);
    } finally {
      expect(await stop(app)).toBe('clean');
    }
  }, 120_000);
});

/** The MongoDB URI with a database of this run's own. */
function withDatabase(uri: string, database: string): string {
  const url = new URL(uri);
  url.pathname = `/${database}`;
  return url.toString();
}
