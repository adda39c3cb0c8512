// newEventId across processes: each draws its own random bits. The processes import the built
// library's module (they run no test framework).
import { describe, expect, it } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { assertBuilt } from '../support/built.js';

const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
// The module itself, by path: newEventId is not part of the package's entries.
const BUILT = fileURLToPath(new URL('../../libs/repository/dist/data-sync/event-id.js', import.meta.url));

describe('newEventId in several processes', () => {
  it('draws its random bits per process: two processes made at once give different ids', () => {
    assertBuilt('libs/repository');
    const make = () =>
      execFileSync(process.execPath, [
        '--input-type=module',
        '-e',
        `import { newEventId } from ${JSON.stringify(BUILT)}; console.log(newEventId());`,
      ])
        .toString()
        .trim();
    const [a, b] = [make(), make()];
    expect(a).toMatch(UUID_V7);
    expect(b).toMatch(UUID_V7);
    // The random part (between the time and the counter) tells the processes apart.
    expect(a.slice(14, 28)).not.toBe(b.slice(14, 28));
  });
});
