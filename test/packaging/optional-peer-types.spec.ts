// No library's published types require a driver the user did not install. Each app below
// type-checks the built declarations of every library (`skipLibCheck: false`) in a scratch
// project whose node_modules holds the repository's packages minus the drivers that app does
// not use: a PostgreSQL-only app has no mongoose and no ioredis, a memory-only app none of them.
// (`preserveSymlinks`: the libraries resolve their imports from the scratch node_modules, as an
// installed package would.) See scripts/optional-peer-types.js.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readdir, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { assertBuilt } from '../support/built.js';
import { root } from '../docs/markdown-files.js';

const ENTRIES = [
  '@ddd-kit/core',
  '@ddd-kit/core/internal',
  '@ddd-kit/core/postgres',
  '@ddd-kit/prepare-key',
  '@ddd-kit/prepare-key/health',
  '@ddd-kit/id-generator',
  '@ddd-kit/id-generator/health',
  '@ddd-kit/repository',
  '@ddd-kit/repository/health',
  '@ddd-kit/repository/outbox',
  '@ddd-kit/repository/http',
  '@ddd-kit/repository/reconciliation',
  '@ddd-kit/transactional-adapter-pg',
  '@ddd-kit/idempotency',
];

const apps: Array<{ name: string; without: string[]; code: string }> = [
  {
    name: 'a PostgreSQL-only app (no mongoose, no ioredis installed)',
    without: ['mongoose', 'mongodb', 'ioredis', '@nestjs/mongoose'],
    code: `
import pg from 'pg';
import { PostgresPrepareKeyFactory } from '@ddd-kit/prepare-key';
import { PostgresMachineIdDistributor } from '@ddd-kit/id-generator';
import { PostgresIdempotencyStore } from '@ddd-kit/idempotency';
const pool = new pg.Pool();
export const parts = [new PostgresPrepareKeyFactory(pool), new PostgresMachineIdDistributor(pool), new PostgresIdempotencyStore(pool)];
`,
  },
  {
    name: 'a memory-only app (no driver installed)',
    without: ['mongoose', 'mongodb', 'ioredis', '@nestjs/mongoose', 'pg', '@types/pg', 'pg-pool', 'pg-protocol'],
    code: `
import { MemoryPrepareKeyFactory } from '@ddd-kit/prepare-key';
import { MemoryIdempotencyStore } from '@ddd-kit/idempotency';
export const parts = [new MemoryPrepareKeyFactory(), new MemoryIdempotencyStore()];
`,
  },
];

describe('the published types, without the drivers an app does not use', () => {
  const scratches: string[] = [];

  beforeAll(() => {
    assertBuilt(
      'libs/core',
      'libs/prepare-key',
      'libs/id-generator',
      'libs/repository',
      'libs/transactional-adapter-pg',
      'libs/idempotency',
    );
  });

  afterAll(async () => {
    for (const dir of scratches) await rm(dir, { recursive: true, force: true });
  });

  it.each(apps)(
    'type-check in $name',
    async ({ without, code }) => {
      const scratch = await mkdtemp(join(tmpdir(), 'ddd-kit-peer-types-'));
      scratches.push(scratch);
      const modules = join(root, 'node_modules');
      const linked = join(scratch, 'node_modules');
      await mkdir(linked);
      for (const entry of await readdir(modules)) {
        if (entry.startsWith('.')) continue;
        if (!entry.startsWith('@')) {
          if (!without.includes(entry)) await symlink(join(modules, entry), join(linked, entry));
          continue;
        }
        await mkdir(join(linked, entry));
        for (const scoped of await readdir(join(modules, entry))) {
          if (!without.includes(`${entry}/${scoped}`))
            await symlink(join(modules, entry, scoped), join(linked, entry, scoped));
        }
      }
      await writeFile(join(scratch, 'package.json'), JSON.stringify({ type: 'module' }));
      await writeFile(
        join(scratch, 'app.ts'),
        `${ENTRIES.map((entry, i) => `import * as entry${i} from '${entry}';`).join('\n')}\n` +
          `export const entries = [${ENTRIES.map((_, i) => `entry${i}`).join(', ')}];\n${code}`,
      );
      await writeFile(
        join(scratch, 'tsconfig.json'),
        JSON.stringify({
          compilerOptions: {
            module: 'nodenext',
            moduleResolution: 'nodenext',
            target: 'es2022',
            strict: true,
            skipLibCheck: false,
            preserveSymlinks: true,
            experimentalDecorators: true,
            noEmit: true,
            types: ['node'],
          },
          files: ['app.ts'],
        }),
      );
      const tsc = join(modules, 'typescript', 'bin', 'tsc');
      const result = await promisify(execFile)(process.execPath, [tsc, '-p', scratch], { timeout: 120_000 }).then(
        () => '',
        (error: { stdout?: string }) => error.stdout ?? String(error),
      );
      expect(result).toBe('');
    },
    180_000,
  );
});
