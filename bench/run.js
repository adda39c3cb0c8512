// `npm run bench`: runs every bench/*.bench.js against the built libraries (dist/), each case
// side by side with the raw driver or peer library in the same run, and prints one table of
// ratios. Servers are resolved exactly as in the tests (test/support/server-provider.js).
// Writes the table to bench/RESULTS.md so the README can quote the latest run.
import { readdirSync, writeFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { dirname, join } from 'node:path';
import os from 'node:os';
import { provideServers } from '../test/support/server-provider.js';

const here = dirname(fileURLToPath(import.meta.url));
const only = process.argv.slice(2);
const files = readdirSync(here)
  .filter((f) => f.endsWith('.bench.js'))
  .filter((f) => only.length === 0 || only.some((o) => f.includes(o)))
  .sort();

const servers = await provideServers();
console.log(`[bench servers]\n  ${servers.report.join('\n  ')}`);

const rows = [];
try {
  for (const file of files) {
    console.log(`\n# ${file}`);
    const mod = await import(pathToFileURL(join(here, file)).href);
    const out = await mod.default({ log: (...a) => console.log('  ', ...a) });
    for (const row of out) {
      rows.push(row);
      console.log('  ', formatRow(row).join(' | '));
    }
  }
} finally {
  await servers.stop();
}

function fmt(n) {
  if (n === undefined || n === null || Number.isNaN(n)) return '—';
  return n >= 100 ? Math.round(n).toLocaleString('en-US') : n.toFixed(2);
}

// A row: { case, subject, baseline, ops, baselineOps, target?, note? }; `ops` are per second.
function formatRow(r) {
  const ratio = r.baselineOps ? r.ops / r.baselineOps : undefined;
  const verdict = r.target === undefined || ratio === undefined ? '' : ratio >= r.target ? 'met' : 'MISSED';
  return [
    r.case,
    r.subject,
    fmt(r.ops),
    r.baseline ?? '—',
    fmt(r.baselineOps),
    ratio === undefined ? '—' : `${ratio.toFixed(2)}×`,
    r.target === undefined ? '' : `≥ ${r.target}× ${verdict}`,
    r.note ?? '',
  ];
}

const header = ['case', 'ddd-kit', 'ops/s', 'baseline', 'baseline ops/s', 'ratio', 'target', 'note'];
const table = [
  `| ${header.join(' | ')} |`,
  `|${header.map(() => '---').join('|')}|`,
  ...rows.map((r) => `| ${formatRow(r).join(' | ')} |`),
].join('\n');
const md = `Bench run ${new Date().toISOString()} on Node ${process.version}, ${os.cpus().length} cores` +
  ` (${os.cpus()[0]?.model ?? 'unknown cpu'}).\nServers: ${servers.report.join('; ')}\n\n${table}\n`;
if (only.length === 0) writeFileSync(join(here, 'RESULTS.md'), md);
console.log(`\n${md}`);
