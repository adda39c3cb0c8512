// Shared measuring helpers for the bench files.
//
// - Every operation a bench counts is checked by the bench (a `prepare` on a fresh key must
//   answer true, …); a wrong answer throws and fails the run. Only completed, checked work is
//   counted.
// - Subject and baseline run in alternating slices within one run (B A, A B, B A, …: the side
//   that goes first swaps every pair, so neither always meets a machine that is warming up or
//   slowing down). The reported ratio is the median of the per-pair ratios (the two slices of
//   a pair ran side by side, under the same load); ops/s are the medians of each side, the
//   spread is the lowest and highest pair ratio, and the median's 95% interval says how far
//   the median itself could be from the machine's true ratio (see medianInterval).
// - Results of synchronous work are kept in `sink`, so V8 cannot skip building them.
// - BENCH_QUICK=1 shortens every slice and keeps two pairs: a check that each bench runs and
//   its answer checks and loss counts hold, in a fraction of the time. Its numbers mean little,
//   so run.js writes nothing from such a run.
import { readFileSync } from 'node:fs';

/** True in a quick run (BENCH_QUICK=1). */
export const QUICK = process.env.BENCH_QUICK === '1';

/** A slice length in ms: as given, or a fifth of it (at least 50 ms) in a quick run. */
export function sliceMs(ms) {
  return QUICK ? Math.max(50, Math.round(ms / 5)) : ms;
}

/** A number of alternating pairs: as given, or two in a quick run. */
export function pairsOf(n) {
  return QUICK ? Math.min(n, 2) : n;
}

/** Where synchronous benches put what they produce: reachable from the module, so never dead code. */
export const sink = new Array(1024);
export const SINK_MASK = 1023;

export function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/**
 * A distribution-free 95% confidence interval of the median of `values` (independent draws):
 * the k-th lowest and k-th highest value, with k the largest for which fewer than k of n draws
 * fall below the median with probability ≤ 2.5% (binomial, p = ½). Undefined when n is too
 * small for any k (fewer than 6 values).
 */
export function medianInterval(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const n = sorted.length;
  let k = 0;
  let below = 0; // P(fewer than k + 1 of n draws fall below the median)
  let term = 2 ** -n; // C(n, k) / 2^n
  while (k < n >> 1) {
    below += term;
    if (below > 0.025) break;
    k++;
    term = (term * (n - k + 1)) / k;
  }
  return k === 0 ? undefined : [sorted[k - 1], sorted[n - k]];
}

/** The summary of per-pair ratios a row shows: median, spread (lowest and highest) and the median's 95% interval. */
export function ratioSummary(ratios) {
  return {
    ratio: median(ratios),
    spread: [Math.min(...ratios), Math.max(...ratios)],
    interval: medianInterval(ratios),
  };
}

/**
 * A source of keys that no earlier call returned: one counter per side for the whole run,
 * never restarted between slices, behind a prefix no other row or run uses.
 */
export function freshKeys(prefix) {
  let n = 0;
  return () => `${prefix}${n++}`;
}

/**
 * Linux scheduler counters of a process (`/proc/<pid>/schedstat`): nanoseconds it ran on a CPU
 * and nanoseconds it was ready to run but waited for one. Undefined where not available.
 */
export function schedSample(pid = 'self') {
  try {
    const [runNs, waitNs] = readFileSync(`/proc/${pid}/schedstat`, 'utf8').trim().split(/\s+/).map(Number);
    return { runNs, waitNs, at: process.hrtime.bigint() };
  } catch {
    return undefined;
  }
}

/** Shares of the wall time between two samples that the process ran and waited for a CPU. */
export function schedShares(before, after) {
  if (!before || !after) return undefined;
  const wallNs = Number(after.at - before.at);
  return { run: (after.runNs - before.runNs) / wallNs, wait: (after.waitNs - before.waitNs) / wallNs };
}

function cpuMicros(since) {
  const used = process.cpuUsage(since);
  return used.user + used.system;
}

/**
 * Runs `batch()` repeatedly for `ms`. `batch` returns (or resolves to) the number of
 * operations it completed and checked, which may be fewer than it set out to do.
 * Resolves to { opsPerSec, cpuUsPerOp } (CPU of this Node process per operation).
 */
export async function measureBatches(batch, { ms }) {
  const cpu = process.cpuUsage();
  const start = process.hrtime.bigint();
  const deadline = start + BigInt(ms) * 1_000_000n;
  let ops = 0;
  let now = start;
  while (now < deadline) {
    ops += await batch();
    now = process.hrtime.bigint();
  }
  return { ops, opsPerSec: ops / (Number(now - start) / 1e9), cpuUsPerOp: cpuMicros(cpu) / ops };
}

/** measureBatches for synchronous work: no await between batches. */
export function measureBatchesSync(batch, { ms }) {
  const cpu = process.cpuUsage();
  const start = process.hrtime.bigint();
  const deadline = start + BigInt(ms) * 1_000_000n;
  let ops = 0;
  let now = start;
  while (now < deadline) {
    ops += batch();
    now = process.hrtime.bigint();
  }
  return { opsPerSec: ops / (Number(now - start) / 1e9), cpuUsPerOp: cpuMicros(cpu) / ops };
}

/**
 * `concurrency` callers, each awaiting `op()` in a loop until `ms` have passed. `op` checks
 * its own answer and throws on a wrong one; every resolved call counts, and the time runs
 * until the last call in flight has completed.
 */
export async function measureConcurrent(op, { concurrency, ms }) {
  const sched = schedSample();
  const cpu = process.cpuUsage();
  const start = process.hrtime.bigint();
  const deadline = start + BigInt(ms) * 1_000_000n;
  let ops = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (process.hrtime.bigint() < deadline) {
        await op();
        ops++;
      }
    }),
  );
  const elapsed = Number(process.hrtime.bigint() - start) / 1e9;
  return { opsPerSec: ops / elapsed, cpuUsPerOp: cpuMicros(cpu) / ops, sched: schedShares(sched, schedSample()) };
}

/**
 * `writers` loops, each calling `op(itsIndex)` (so each can own its aggregates), until `ms` have
 * passed; every resolved call counts.
 */
export async function perWriterOpsPerSecond(op, { writers, ms }) {
  const cpu = process.cpuUsage();
  const start = process.hrtime.bigint();
  const deadline = start + BigInt(ms) * 1_000_000n;
  let ops = 0;
  await Promise.all(
    Array.from({ length: writers }, async (_, index) => {
      while (process.hrtime.bigint() < deadline) {
        await op(index);
        ops++;
      }
    }),
  );
  return { ops, opsPerSec: ops / (Number(process.hrtime.bigint() - start) / 1e9), cpuUsPerOp: cpuMicros(cpu) / ops };
}

/** The p-th percentile (0–100) of sorted numbers, nearest rank. */
export function percentile(sorted, p) {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

/**
 * Measures subject and baseline in `pairs` pairs of adjacent slices, alternating which side
 * goes first. Each measure resolves to { opsPerSec, cpuUsPerOp? }; `before()` runs ahead of
 * every slice (untimed). The baseline may be a constant (a number): then only the subject runs.
 */
export async function alternate(measureSubject, measureBaseline, { pairs = 6, before = async () => {} } = {}) {
  const subject = [];
  const baseline = [];
  const ratios = [];
  for (let i = 0; i < pairs; i++) {
    const runSubject = async () => {
      await before();
      subject.push(await measureSubject());
    };
    const runBaseline = async () => {
      if (typeof measureBaseline === 'number') return baseline.push({ opsPerSec: measureBaseline });
      await before();
      baseline.push(await measureBaseline());
    };
    if (i % 2 === 0) {
      await runBaseline();
      await runSubject();
    } else {
      await runSubject();
      await runBaseline();
    }
    ratios.push(subject[i].opsPerSec / baseline[i].opsPerSec);
  }
  const medianOf = (side, field) =>
    side.every((s) => s[field] !== undefined) ? median(side.map((s) => s[field])) : undefined;
  return {
    ops: median(subject.map((s) => s.opsPerSec)),
    baselineOps: median(baseline.map((s) => s.opsPerSec)),
    ...ratioSummary(ratios),
    pairs,
    cpuUsPerOp: medianOf(subject, 'cpuUsPerOp'),
    baselineCpuUsPerOp: medianOf(baseline, 'cpuUsPerOp'),
    walBytesPerOp: medianOf(subject, 'walBytesPerOp'),
    baselineWalBytesPerOp: medianOf(baseline, 'walBytesPerOp'),
  };
}

/**
 * `measure` (a slice resolving `{ ops, … }`) with the WAL PostgreSQL wrote meanwhile per
 * operation: how far the server's WAL insert position moved (the whole server's; nothing else
 * writes during a slice). pg_stat_wal counts the same bytes, but a backend reports them up to a
 * second late.
 */
export function withWal(pool, measure) {
  const walBytes = async () =>
    Number((await pool.query("SELECT pg_wal_lsn_diff(pg_current_wal_insert_lsn(), '0/0') AS at")).rows[0].at);
  return async () => {
    const before = await walBytes();
    const result = await measure();
    return { ...result, walBytesPerOp: ((await walBytes()) - before) / result.ops };
  };
}

/** "WAL per op: 512 vs 215 bytes", when both sides report it. */
export function walNote(result) {
  if (result.walBytesPerOp === undefined || result.baselineWalBytesPerOp === undefined) return undefined;
  return `WAL per op: ${Math.round(result.walBytesPerOp)} vs ${Math.round(result.baselineWalBytesPerOp)} bytes`;
}

/** "12.3 µs vs 11.0 µs of Node CPU per op", when both sides report it. */
export function cpuNote(result) {
  if (result.cpuUsPerOp === undefined || result.baselineCpuUsPerOp === undefined) return undefined;
  return `Node CPU per op: ${result.cpuUsPerOp.toFixed(1)} µs vs ${result.baselineCpuUsPerOp.toFixed(1)} µs`;
}

/** Joins the defined parts of a note. */
export function notes(...parts) {
  return parts.filter((p) => p !== undefined && p !== '').join('; ');
}

// ---------------------------------------------------------------- the table's cells

export function fmt(n, unit) {
  if (n === undefined || n === null || Number.isNaN(n)) return '—';
  const number = n >= 100 ? Math.round(n).toLocaleString('en-US') : n.toFixed(2);
  return unit ? `${number} ${unit}` : number;
}

export function range(r) {
  return r ? `${r[0].toFixed(2)}–${r[1].toFixed(2)}×` : '—';
}

/**
 * The verdict; a missed ratio target says whether the run could tell the gap from noise. With an
 * A/A control (two identical sides measured as the row was), the machine's resolution for that
 * kind of row is how far the control's 95% interval reaches from 1.00×: a gap no larger, with
 * the target inside the row's own interval, is one this machine cannot resolve.
 */
export function verdict(t, ratio, interval, control) {
  if (t === undefined) return '';
  if (typeof t === 'number') {
    if (ratio === undefined) return `≥ ${t}×`;
    if (ratio >= t) return `≥ ${t}× met`;
    if (interval === undefined || interval[1] < t) return `≥ ${t}× MISSED`;
    const gap = t - ratio;
    const resolution = control?.interval && Math.max(1 - control.interval[0], control.interval[1] - 1);
    if (resolution !== undefined && gap <= resolution)
      return `≥ ${t}× MISSED by ${gap.toFixed(2)}×: below this machine's resolution (A/A control ${range(control.interval)}, ±${resolution.toFixed(2)}×)`;
    return `≥ ${t}× MISSED (inside the 95% interval: not resolved)`;
  }
  const measured = fmt(t.value, t.unit);
  return `≤ ${fmt(t.max, t.unit)} ${Number.isFinite(t.value) && t.value <= t.max ? 'met' : 'MISSED'} (${measured})`;
}
