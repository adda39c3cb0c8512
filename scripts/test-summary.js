// Summarises Jest's JSON results (`--json --outputFile=…`), one file per run: the counts, the
// run's wall time and its ten slowest test files, so that a change that makes the suite slower
// shows in its own CI run. Exits 1 when a run failed, skipped a test or wrote no results.
//
//   node scripts/test-summary.js <label>=<results.json> …
//   node scripts/test-summary.js --record <results.json>   (writes test/support/test-durations.json)
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { relative } from 'node:path';

/** What the slowest-first sequencer (test/support/slowest-first.sequencer.js) reads. */
const DURATIONS = 'test/support/test-durations.json';

if (process.argv[2] === '--record') {
  const run = JSON.parse(readFileSync(process.argv[3], 'utf8'));
  const durations = Object.fromEntries(
    run.testResults
      .map((result) => [
        relative(process.cwd(), result.name),
        Math.round((result.endTime - result.startTime) / 100) / 10,
      ])
      .sort(([a], [b]) => (a < b ? -1 : 1)),
  );
  writeFileSync(DURATIONS, `${JSON.stringify(durations, null, 2)}\n`);
  console.log(`recorded ${Object.keys(durations).length} files' durations (s) in ${DURATIONS}`);
  process.exit(0);
}

const seconds = (ms) => `${(ms / 1000).toFixed(1)} s`;
let passed = 0;
let failed = 0;
let skipped = 0;

for (const argument of process.argv.slice(2)) {
  const [label, file] = argument.includes('=') ? argument.split(/=(.*)/s) : [argument, argument];
  if (!existsSync(file)) {
    console.log(`${label}: no results (the run did not finish)`);
    failed += 1;
    continue;
  }
  const run = JSON.parse(readFileSync(file, 'utf8'));
  const files = run.testResults.map((result) => ({
    name: relative(process.cwd(), result.name),
    ms: result.endTime - result.startTime,
  }));
  const endedAt = Math.max(run.startTime, ...run.testResults.map((result) => result.endTime));
  console.log(
    `${label}: ${run.numPassedTests} passed, ${run.numFailedTests} failed, ${run.numPendingTests + run.numTodoTests} skipped, ` +
      `${run.numFailedTestSuites} of ${run.numTotalTestSuites} files failed, in ${seconds(endedAt - run.startTime)} ` +
      `(${seconds(files.reduce((sum, f) => sum + f.ms, 0))} of test files in all)`,
  );
  console.log('  the ten slowest files:');
  for (const { name, ms } of files.sort((a, b) => b.ms - a.ms).slice(0, 10)) {
    console.log(`  ${seconds(ms).padStart(9)}  ${name}`);
  }
  passed += run.numPassedTests;
  failed += run.numFailedTests + run.numRuntimeErrorTestSuites;
  skipped += run.numPendingTests + run.numTodoTests;
}

console.log(`ci: ${passed} passed, ${failed} failed, ${skipped} skipped`);
process.exit(failed > 0 || skipped > 0 ? 1 : 0);
