// Runs the slowest test files first, so that the workers finish together instead of one long
// multi-process file starting last. A fresh clone (CI) has no Jest cache, and Jest then orders by
// file size, which puts the small specs that drive whole app processes at the end: the durations
// come from a recorded run (test-durations.json, `node scripts/test-summary.js --record <results>`),
// a file not recorded yet keeps Jest's own order after them. Only the order changes, never what runs.
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import Sequencer from '@jest/test-sequencer';

const recorded = JSON.parse(readFileSync(new URL('./test-durations.json', import.meta.url), 'utf8'));

export default class SlowestFirstSequencer extends Sequencer {
  async sort(tests) {
    const seconds = (test) => recorded[relative(test.context.config.rootDir, test.path)] ?? 0;
    // Array.prototype.sort is stable: equal (unrecorded) files keep the default order.
    return [...(await super.sort(tests))].sort((a, b) => seconds(b) - seconds(a));
  }
}
