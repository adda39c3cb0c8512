// Each library's entry points are declared once, in the `exports` of its package.json; everything
// else derives from them (scripts/workspace-entries.js): Jest's moduleNameMapper, the tsconfig
// `paths` (tsconfig.paths.json, written by `npm run entries`) and the type-checked docs. This
// checks that the written copy still agrees, that Jest resolves every entry to its source, and
// that each packed tarball ships every file its exports name and nothing that points elsewhere
// (no source maps, no sources).
import { describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { promisify } from 'node:util';
import { PATHS_FILE, pathsFileText, workspaceEntries } from '../../scripts/workspace-entries.js';
import { assertBuilt } from '../support/built.js';
import { root } from '../docs/markdown-files.js';

const entries = workspaceEntries(root);

describe('entry points, declared once in each library’s exports', () => {
  it('finds every library’s entries, sub-path ones included', () => {
    const specifiers = entries.map(({ specifier }) => specifier);
    expect(specifiers).toEqual(expect.arrayContaining(['@ddd-kit/core', '@ddd-kit/repository/nats']));
    expect(new Set(specifiers).size).toBe(specifiers.length);
  });

  it(`${PATHS_FILE} lists exactly those entries (npm run entries writes it)`, () => {
    expect(readFileSync(join(root, PATHS_FILE), 'utf8')).toBe(pathsFileText(root));
  });

  it("Jest's moduleNameMapper maps each entry to its source file, and nothing else of @ddd-kit", async () => {
    const config = (await import(join(root, 'jest.config.js'))) as {
      default: { moduleNameMapper: Record<string, string> };
    };
    const mapper = config.default.moduleNameMapper;
    const resolve = (specifier: string) => {
      for (const [pattern, target] of Object.entries(mapper))
        if (new RegExp(pattern).test(specifier)) return specifier.replace(new RegExp(pattern), target);
      return undefined;
    };
    for (const { specifier, source } of entries)
      expect({ specifier, mapped: resolve(specifier) }).toEqual({
        specifier,
        mapped: `<rootDir>/${relative(root, source)}`,
      });
    expect(resolve('@ddd-kit/repository/not-an-entry')).toBeUndefined();
  });

  it.each(entries.map(({ specifier }) => specifier))('Jest imports %s from the sources', async (specifier) => {
    const module = (await import(specifier)) as Record<string, unknown>;
    expect(Object.keys(module).length).toBeGreaterThan(0);
  });
});

interface PackedFile {
  path: string;
}

describe('what each tarball ships', () => {
  const libs = [...new Set(entries.map(({ source }) => relative(root, source).split('/').slice(0, 2).join('/')))];

  it.each(libs)(
    '%s: every file its exports name, no source map, no source',
    async (lib) => {
      assertBuilt(lib);
      const { stdout } = await promisify(execFile)('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {
        cwd: join(root, lib),
      });
      const files = new Set(
        ((JSON.parse(stdout) as Array<{ files: PackedFile[] }>)[0]?.files ?? []).map((f) => f.path),
      );
      const pkg = JSON.parse(readFileSync(join(root, lib, 'package.json'), 'utf8')) as {
        exports: Record<string, Record<string, string>>;
      };
      const named = Object.values(pkg.exports).flatMap((conditions) =>
        Object.values(conditions).map((target) => target.replace(/^\.\//, '')),
      );
      expect(named.filter((file) => !files.has(file))).toEqual([]);
      expect([...files].filter((file) => file.endsWith('.map') || file.startsWith('src/'))).toEqual([]);
    },
    60_000,
  );
});
