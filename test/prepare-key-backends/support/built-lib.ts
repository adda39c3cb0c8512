import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

const LIB = join(process.cwd(), 'libs', 'prepare-key');

/**
 * The worker processes import the BUILT library (`@ddd-kit/prepare-key` → libs/prepare-key/dist),
 * as an application would. Fails, saying what to do, when dist is missing or older than the
 * sources, so a test never passes or fails on stale code.
 */
export function assertBuiltLib(): void {
  const entry = join(LIB, 'dist', 'index.js');
  if (!existsSync(entry)) {
    throw new Error(`${entry} is missing: run \`npm run build\` before these tests (CI builds first)`);
  }
  const builtAt = statSync(entry).mtimeMs;
  const newer = sourcesOf(join(LIB, 'src')).find((file) => statSync(file).mtimeMs > builtAt);
  if (newer !== undefined) {
    throw new Error(`libs/prepare-key/dist is older than ${newer}: run \`npm run build\` before these tests`);
  }
}

function sourcesOf(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourcesOf(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.spec.ts') ? [path] : [];
  });
}
