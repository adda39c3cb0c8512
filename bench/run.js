// `npm run bench`: runs every bench/*.bench.js against the built libraries (dist/), each case
// beside its baseline in the same run, and prints one table of ratios. Servers are resolved
// exactly as in the tests (test/support/server-provider.js).
//
// Each file runs in a Node process of its own (bench/run-file.js).
//
// A full run (no file filter) writes the table, with the machine, Node version, date, load and
// servers, to bench/RESULTS.md: the one place the numbers are (docs/bench.md links it and holds
// none). No number in the docs is typed by hand.
// A bench that throws (a wrong answer, a missing tool) fails the run and writes nothing, and so
// does a quick run (BENCH_QUICK=1, see util.js), whose numbers mean little.
import { execFileSync, fork } from 'node:child_process';
import { readdirSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import os from 'node:os';
import { Redis } from 'ioredis';
import { provideServers } from '../test/support/server-provider.js';
import { QUICK, fmt, range, verdict } from './util.js';

const here = dirname(fileURLToPath(import.meta.url));
const only = process.argv.slice(2);
const files = readdirSync(here)
  .filter((f) => f.endsWith('.bench.js'))
  .filter((f) => only.length === 0 || only.some((o) => f.includes(o)))
  .sort();
const startedAt = new Date();
const servers = await provideServers();
console.log(`[bench servers]\n  ${servers.report.join('\n  ')}`);

const load = () =>
  os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' / ');
const rows = [];
const loads = [];
const failures = [];
let redisVersion;
try {
  redisVersion = await serverVersion();
  for (const file of files) {
    console.log(`\n# ${file}`);
    const before = load();
    const fileStart = Date.now();
    try {
      const out = await runFile(join(here, file));
      for (const row of out) {
        rows.push({ ...row, file });
        console.log('  ', formatRow(row).join(' | '));
      }
    } catch (error) {
      failures.push(`${file}: ${error.stack ?? error}`);
      console.error(`   FAILED: ${error.stack ?? error}`);
    }
    loads.push(`${file}: ${before} → ${load()} (${Math.round((Date.now() - fileStart) / 1000)} s)`);
  }
} finally {
  await servers.stop();
}

/** The rows of one bench file, run in a Node process of its own (bench/run-file.js). */
function runFile(path) {
  return new Promise((resolve, reject) => {
    const child = fork(join(here, 'run-file.js'), [path], { stdio: 'inherit' });
    let answer;
    child.on('message', (message) => (answer = message));
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      if (answer?.rows) resolve(answer.rows);
      else reject(new Error(answer?.error ?? `the bench process exited with ${signal ?? code} before answering`));
    });
  });
}

async function serverVersion() {
  const redis = new Redis(process.env.REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
  try {
    await redis.connect();
    return /redis_version:(\S+)/.exec(await redis.info('server'))?.[1] ?? 'unknown';
  } catch {
    return 'unreachable';
  } finally {
    redis.disconnect();
  }
}

/**
 * A row: { case, subject, baseline, ops, baselineOps, ratio, spread, interval?, pairs, target?, peer?,
 * unit?, control?, settings, note? }.
 * - control: { interval } of the A/A control row measured as this row was (see verdict() in util.js).
 * - ratio: subject ÷ baseline, so above 1 the subject is ahead; a row measuring something where
 *   less is better (a lag) gives it as baseline ÷ subject, and its `unit` ('ms') labels ops.
 * - target: a number (the ratio must reach it), or { max, value, unit } (a measured value that
 *   must not exceed max, e.g. a p99 lag): verdict() works the verdict out from what was measured.
 * - peer: the baseline is the library a user would pick instead; the leads column says which
 *   side is ahead, and whether the pairs agreed on it (`leads` says it where no ratio can be
 *   taken: a lag of 0 ms).
 */
function formatRow(r) {
  // A row in a unit (a lag) gives its own ratio, or none where none can be taken.
  const ratio = r.ratio ?? (r.unit === undefined && r.baselineOps ? r.ops / r.baselineOps : undefined);
  return [
    r.case,
    r.subject,
    fmt(r.ops, r.unit),
    r.baseline ?? '—',
    fmt(r.baselineOps, r.unit),
    ratio === undefined ? '—' : `${ratio.toFixed(2)}×`,
    range(r.spread),
    range(r.interval),
    verdict(r.target, ratio, r.interval, r.control),
    r.peer ? (r.leads ?? leads(ratio, r.spread)) : '',
    r.settings ?? '',
    r.note ?? '',
  ].map((cell) => String(cell).replaceAll('|', '\\|'));
}

function leads(ratio, spread) {
  if (ratio === undefined || ratio === 1) return ratio === 1 ? 'even' : '';
  const side = ratio > 1 ? 'ddd-kit ahead' : 'peer ahead';
  return spread && spread[0] < 1 && spread[1] > 1 ? `${side} (pairs split)` : side;
}

const header = [
  'case',
  'ddd-kit',
  'ops/s',
  'baseline',
  'baseline ops/s',
  'ratio',
  'spread',
  '95% interval',
  'target',
  'leads',
  'settings',
  'note',
];
const table = (selected) =>
  [
    `| ${header.join(' | ')} |`,
    `|${header.map(() => '---').join('|')}|`,
    ...selected.map((r) => `| ${formatRow(r).join(' | ')} |`),
  ].join('\n');

const cpus = os.cpus();
const about = [
  `Bench run ${startedAt.toISOString()} (${Math.round((Date.now() - startedAt.getTime()) / 1000)} s) on Node ${process.version} (V8 ${process.versions.v8}),` +
    ` ${os.type()} ${os.release()}, ${cpus.length} × ${cpus[0]?.model?.trim() ?? 'unknown CPU'}, ${Math.round(os.totalmem() / 2 ** 30)} GiB;` +
    ` Redis ${redisVersion}${redisBenchmarkVersion()}.`,
  `Load average (1 / 5 / 15 min) at the start and end of each file (and the file's time), a sign of other work sharing the machine: ${loads.join('; ')}.`,
  `Servers: ${servers.report.join('; ')}.`,
  'ratio: the median of the per-pair ratios (subject ÷ baseline, measured in adjacent, alternating slices);' +
    ' ops/s: the median of each side; spread: the lowest and highest pair ratio; 95% interval: a distribution-free 95% confidence interval of the median ratio,' +
    ' from the order statistics of the pair ratios (— with fewer than 6 pairs). Every counted operation had its answer checked.',
  "A ratio above 1 puts ddd-kit ahead (for lags, given in ms, the ratio is the baseline's lag ÷ ddd-kit's); leads: against a peer library," +
    ' which side the median ratio puts ahead, "(pairs split)" when some pairs put the other side ahead. Targets are judged from the measured values:' +
    ' a median ratio below its target is MISSED, "not resolved" when the target lies inside the 95% interval, and "below this machine\'s resolution"' +
    " when, besides, the gap is no larger than how far the 95% interval of the row's A/A control (two identical sides, measured alike) reaches from 1.00×.",
].join('\n');

function redisBenchmarkVersion() {
  try {
    return `, ${execFileSync('redis-benchmark', ['--version'], { encoding: 'utf8' }).trim()}`;
  } catch {
    return '';
  }
}

const md = `${about}\n\n${table(rows)}\n`;
console.log(`\n${md}`);

if (failures.length > 0) {
  console.error(`\n${failures.length} bench file(s) failed; nothing written:\n${failures.join('\n')}`);
  process.exit(1);
}
if (QUICK) {
  console.log('\nA quick run (BENCH_QUICK=1): its numbers are not written anywhere.');
} else if (only.length === 0) {
  writeFileSync(join(here, 'RESULTS.md'), md);
}
