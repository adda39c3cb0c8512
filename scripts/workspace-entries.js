#!/usr/bin/env node
// The entry points of the workspace's libraries, read from the one place that declares them: the
// `exports` map of each libs/*/package.json. An entry `./<sub>` built as `./dist/<path>.js` is
// `@ddd-kit/<lib>/<sub>`, whose source is `libs/<lib>/src/<path>.ts`. Everything that resolves
// `@ddd-kit/*` to the sources derives from here: Jest's moduleNameMapper (jest.config.js), the
// type-checked docs (test/docs/readme-snippets.spec.ts) and the `paths` of tsconfig.paths.json,
// which TypeScript cannot compute and this script writes:
//
//   node scripts/workspace-entries.js          rewrites tsconfig.paths.json from the exports maps
//   node scripts/workspace-entries.js --check  fails when tsconfig.paths.json says otherwise
//
// (`npm run entries` and `npm run typecheck` run them.) So adding an entry is one edit: its line
// in the library's `exports`, then `npm run entries`.
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

export const root = join(dirname(fileURLToPath(import.meta.url)), '..');
export const PATHS_FILE = 'tsconfig.paths.json';

/**
 * Every entry point of every library under libs/, in a stable order:
 * `{ specifier: '@ddd-kit/core/postgres', source: '<absolute>/libs/core/src/postgres/index.ts' }`.
 * An export whose built file is not `./dist/….js`, or whose source does not exist, is an error.
 */
export function workspaceEntries(base = root) {
  const entries = [];
  const libs = readdirSync(join(base, 'libs'), { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && existsSync(join(base, 'libs', entry.name, 'package.json')))
    .map((entry) => entry.name)
    .sort();
  for (const lib of libs) {
    const pkgFile = join(base, 'libs', lib, 'package.json');
    const pkg = JSON.parse(readFileSync(pkgFile, 'utf8'));
    for (const [subpath, target] of Object.entries(pkg.exports ?? {})) {
      const built = typeof target === 'string' ? target : target?.default;
      const match = /^\.\/dist\/(.+)\.js$/.exec(built ?? '');
      if (!match) throw new Error(`${relative(base, pkgFile)}: exports["${subpath}"] is not a ./dist/….js file`);
      const source = join(base, 'libs', lib, 'src', `${match[1]}.ts`);
      if (!existsSync(source))
        throw new Error(`${relative(base, pkgFile)}: exports["${subpath}"] has no source ${relative(base, source)}`);
      const specifier = subpath === '.' ? pkg.name : `${pkg.name}/${subpath.replace(/^\.\//, '')}`;
      entries.push({ specifier, source });
    }
  }
  return entries;
}

/** Jest's moduleNameMapper entries: each specifier, exactly, to its source. */
export function jestModuleNameMapper(base = root) {
  const escape = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return Object.fromEntries(
    workspaceEntries(base).map(({ specifier, source }) => [
      `^${escape(specifier)}$`,
      `<rootDir>/${relative(base, source).split('\\').join('/')}`,
    ]),
  );
}

/** The `paths` of a tsconfig at the root of `base`: each specifier to its source, relative. */
export function tsconfigPaths(base = root) {
  return Object.fromEntries(
    workspaceEntries(base).map(({ specifier, source }) => [
      specifier,
      [`./${relative(base, source).split('\\').join('/')}`],
    ]),
  );
}

/** What tsconfig.paths.json holds, as this script writes it (one entry a line, as Prettier keeps it). */
export function pathsFileText(base = root) {
  const lines = Object.entries(tsconfigPaths(base)).map(
    ([specifier, targets]) => `      ${JSON.stringify(specifier)}: ${JSON.stringify(targets)}`,
  );
  return `{\n  "compilerOptions": {\n    "paths": {\n${lines.join(',\n')}\n    }\n  }\n}\n`;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const file = join(root, PATHS_FILE);
  const wanted = pathsFileText();
  const current = existsSync(file) ? readFileSync(file, 'utf8') : '';
  if (process.argv.includes('--check')) {
    if (current !== wanted) {
      console.error(
        `${PATHS_FILE} does not list the entry points of the libraries' package.json "exports": run \`npm run entries\``,
      );
      process.exit(1);
    }
  } else if (current !== wanted) {
    writeFileSync(file, wanted);
    console.log(`${PATHS_FILE}: written from the exports of libs/*/package.json`);
  }
}
