// Tests that run the BUILT code (worker processes, the app's own processes, plain Node imports)
// must never pass or fail on stale output: they call assertBuilt first.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/**
 * Fails, saying what to do, when the build of a workspace package (`'apps/registration'`,
 * `'libs/prepare-key'`, …) or of a ddd-kit package it depends on is missing or older than any
 * of its sources. `npm test` builds first; a run of single files after an edit may not have.
 */
export function assertBuilt(...packages: string[]): void {
  const seen = new Set<string>();
  const check = (pkg: string): void => {
    if (seen.has(pkg)) return;
    seen.add(pkg);
    const dist = join(ROOT, pkg, 'dist');
    const entry = ['index.js', 'main.js'].map((file) => join(dist, file)).find((file) => existsSync(file));
    if (entry === undefined) {
      throw new Error(`${pkg}/dist is missing: run \`npm run build\` before these tests (\`npm test\` builds first)`);
    }
    // An incremental build rewrites only the outputs that changed, and its build info each time
    // it compiled anything: the later of the two is when the build last ran.
    const info = join(dist, '.tsbuildinfo');
    const builtAt = Math.max(statSync(entry).mtimeMs, existsSync(info) ? statSync(info).mtimeMs : 0);
    const newer = sourcesOf(join(ROOT, pkg, 'src')).find((file) => statSync(file).mtimeMs > builtAt);
    if (newer !== undefined) {
      throw new Error(
        `${relative(ROOT, entry)} is older than ${relative(ROOT, newer)}: these tests run the built code, so run \`npm run build\` first (\`npm test\` builds first)`,
      );
    }
    for (const dependency of dddKitDependencies(pkg)) check(dependency);
  };
  for (const pkg of packages) check(pkg);
}

/** `libs/<name>` for each `@ddd-kit/<name>` the package depends on. */
function dddKitDependencies(pkg: string): string[] {
  const manifest = JSON.parse(readFileSync(join(ROOT, pkg, 'package.json'), 'utf8'));
  const names = Object.keys({ ...manifest.dependencies, ...manifest.peerDependencies });
  return names
    .filter((name) => name.startsWith('@ddd-kit/'))
    .map((name) => `libs/${name.slice('@ddd-kit/'.length)}`)
    .filter((dir) => existsSync(join(ROOT, dir, 'package.json')));
}

/** The sources a build compiles: .ts files but tests (`*.spec.ts`, `__tests__/`). */
function sourcesOf(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === '__tests__' ? [] : sourcesOf(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.spec.ts') ? [path] : [];
  });
}
