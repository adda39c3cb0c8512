// `npm run bench`: runs every bench/*.bench.js against the built libraries (dist/), each case
// beside its baseline in the same run, and prints one table of ratios. Servers are resolved
// exactly as in the tests (test/support/server-provider.js).
//
// A full run (no file filter) writes the table, with the machine, Node version, date, load and
// servers, to bench/RESULTS.md, and rewrites every block of docs/bench.md between
// `<!-- bench:start [files=<part>] -->` and `<!-- bench:end -->` with the rows of the bench
// files whose name contains <part> (all rows without it). No number in the docs is typed by hand.
// A bench that throws (a wrong answer, a missing tool) fails the run and writes nothing.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { dirname, join, relative } from 'node:path';
import os from 'node:os';
import { Redis } from 'ioredis';
import { provideServers } from '../test/support/server-provider.js';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..');
const only = process.argv.slice(2);
const files = readdirSync(here)
  .filter((f) => f.endsWith('.bench.js'))
  .filter((f) => only.length === 0 || only.some((o) => f.includes(o)))
  .sort();
/** The Markdown pages whose bench blocks a full run rewrites. */
const PAGES = ['docs/bench.md'];

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
    try {
      const mod = await import(pathToFileURL(join(here, file)).href);
      const out = await mod.default({ log: (...a) => console.log('  ', ...a) });
      for (const row of out) {
        rows.push({ ...row, file });
        console.log('  ', formatRow(row).join(' | '));
      }
    } catch (error) {
      failures.push(`${file}: ${error.stack ?? error}`);
      console.error(`   FAILED: ${error.stack ?? error}`);
    }
    loads.push(`${file}: ${before} → ${load()}`);
  }
} finally {
  await servers.stop();
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

function fmt(n) {
  if (n === undefined || n === null || Number.isNaN(n)) return '—';
  return n >= 100 ? Math.round(n).toLocaleString('en-US') : n.toFixed(2);
}

// A row: { case, subject, baseline, ops, baselineOps, ratio, spread, pairs, target?, settings, note? }.
function formatRow(r) {
  const ratio = r.ratio ?? (r.baselineOps ? r.ops / r.baselineOps : undefined);
  const verdict = r.target === undefined || ratio === undefined ? '' : ratio >= r.target ? 'met' : 'MISSED';
  return [
    r.case,
    r.subject,
    fmt(r.ops),
    r.baseline ?? '—',
    fmt(r.baselineOps),
    ratio === undefined ? '—' : `${ratio.toFixed(2)}×`,
    r.spread ? `${r.spread[0].toFixed(2)}–${r.spread[1].toFixed(2)}×` : '—',
    r.target === undefined ? '' : `≥ ${r.target}× ${verdict}`,
    r.settings ?? '',
    r.note ?? '',
  ].map((cell) => String(cell).replaceAll('|', '\\|'));
}

const header = [
  'case',
  'ddd-kit',
  'ops/s',
  'baseline',
  'baseline ops/s',
  'ratio',
  'spread',
  'target',
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
  `Load average (1 / 5 / 15 min) at the start and end of each file, a sign of other work sharing the machine: ${loads.join('; ')}.`,
  `Servers: ${servers.report.join('; ')}.`,
  'ratio: the median of the per-pair ratios (subject ÷ baseline, measured in adjacent, alternating slices);' +
    ' ops/s: the median of each side; spread: the lowest and highest pair ratio. Every counted operation had its answer checked.',
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
if (only.length === 0) {
  writeFileSync(join(here, 'RESULTS.md'), md);
  for (const page of PAGES) rewriteBlocks(join(root, page));
}

/** Replaces each `<!-- bench:start [files=<part>] -->` … `<!-- bench:end -->` block of a page. */
function rewriteBlocks(path) {
  let text;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return;
  }
  const link = relative(dirname(path), join(here, 'RESULTS.md'));
  const next = text.replace(
    /(<!-- bench:start(?: files=([\w-]+))? -->\n)[\s\S]*?(<!-- bench:end -->)/g,
    (_, start, part, end) => {
      const selected = part ? rows.filter((r) => r.file.includes(part)) : rows;
      const when = `Generated by \`npm run bench\` on ${startedAt.toISOString().slice(0, 10)} (Node ${process.version}, ${cpus.length} × ${cpus[0]?.model?.trim() ?? 'unknown CPU'}, load average ${loads.length ? os.loadavg()[0].toFixed(2) : '—'} at the end); machine, load and servers in [${link}](${link}).`;
      return `${start}${when}\n\n${table(selected)}\n${end}`;
    },
  );
  if (next !== text) writeFileSync(path, next);
}
