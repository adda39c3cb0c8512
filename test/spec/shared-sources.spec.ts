// Some small internals are the same file in several libraries, because each library installs
// and runs on its own (no shared runtime package). A fix made to one copy must reach them all.
import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../', import.meta.url));
const read = (path: string): string => readFileSync(root + path, 'utf8');

const COPIES: Record<string, string[]> = {
  'telemetry helper': [
    'libs/prepare-key/src/telemetry/telemetry.ts',
    'libs/id-generator/src/telemetry/telemetry.ts',
    'libs/repository/src/telemetry/telemetry.ts',
  ],
  'module-owned Redis connection': [
    'libs/prepare-key/src/backends/redis/redis-connection.ts',
    'libs/id-generator/src/machine/redis/redis-connection.ts',
  ],
};

describe('files kept identical across libraries', () => {
  for (const [what, [first, ...others]] of Object.entries(COPIES)) {
    it.each(others)(`${what}: %s is the same as ${first}`, (other) => {
      expect(read(other)).toBe(read(first));
    });
  }
});
