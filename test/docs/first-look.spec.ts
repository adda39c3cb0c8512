// The root README's first look runs as written: its block (```ts file=first-look.ts) is compiled
// as a user's build would compile it, run with Node against the built libraries (npm test builds
// first), and must print what the README says it prints.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import ts from 'typescript';
import { root } from './markdown-files.js';

const readme = readFileSync(join(root, 'README.md'), 'utf8');
const block = /^```ts file=first-look\.ts\n([\s\S]*?)\n```$/m.exec(readme)?.[1];
/** What the README says the program prints: the `// prints:` lines after the block's last statement. */
const expected = [...(block ?? '').matchAll(/\/\/ prints: (.*)$/gm)].map((m) => m[1]);

describe('the first look of the root README', () => {
  let scratch: string;

  beforeAll(async () => {
    scratch = await mkdtemp(join(tmpdir(), 'ddd-kit-first-look-'));
    await symlink(join(root, 'node_modules'), join(scratch, 'node_modules'), 'dir');
    await writeFile(join(scratch, 'package.json'), JSON.stringify({ type: 'module' }));
  });

  afterAll(async () => {
    if (scratch) await rm(scratch, { recursive: true, force: true });
  });

  it('is there, and says what it prints', () => {
    expect(block).toBeDefined();
    expect(expected.length).toBeGreaterThan(0);
  });

  it('runs and prints what it says', async () => {
    const js = ts.transpileModule(block!, {
      compilerOptions: {
        module: ts.ModuleKind.ESNext,
        target: ts.ScriptTarget.ES2022,
        experimentalDecorators: true,
        emitDecoratorMetadata: true,
      },
    }).outputText;
    await writeFile(join(scratch, 'first-look.js'), js);
    const { stdout } = await promisify(execFile)(process.execPath, ['first-look.js'], {
      cwd: scratch,
      timeout: 60_000,
    });
    // Generated ids differ from run to run: compare with the id's place held.
    const lines = stdout.trim().split('\n');
    expect(lines).toHaveLength(expected.length);
    lines.forEach((line, i) => {
      const pattern = expected[i].replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/<id>/g, '[0-9A-Za-z]+');
      expect(line).toMatch(new RegExp(`^${pattern}$`));
    });
  }, 90_000);
});
