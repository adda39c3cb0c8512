// Shared timing helpers for the bench files: measure a workload for a fixed duration and
// report operations per second. Subject and baseline are measured alternately, twice each,
// and the best of each is kept, so a passing hiccup does not decide the ratio.

/** Runs `batch()` (which performs `opsPerBatch` operations) repeatedly for `ms`. */
export async function opsPerSecond(batch, { ms = 1000, opsPerBatch = 1 } = {}) {
  const start = process.hrtime.bigint();
  const deadline = start + BigInt(ms) * 1_000_000n;
  let ops = 0;
  let now = start;
  while (now < deadline) {
    await batch();
    ops += opsPerBatch;
    now = process.hrtime.bigint();
  }
  return ops / (Number(now - start) / 1e9);
}

/** Same as opsPerSecond for synchronous work (no await per batch). */
export function opsPerSecondSync(batch, { ms = 1000, opsPerBatch = 1 } = {}) {
  const start = process.hrtime.bigint();
  const deadline = start + BigInt(ms) * 1_000_000n;
  let ops = 0;
  let now = start;
  while (now < deadline) {
    batch();
    ops += opsPerBatch;
    now = process.hrtime.bigint();
  }
  return ops / (Number(now - start) / 1e9);
}

/**
 * Runs two measurements (each resolving to ops/s) `rounds` times, swapping which goes first
 * every round (a server that slows down as garbage piles up, like a JVM, must not always
 * penalise the same side), with `before()` ahead of each; returns the best of each.
 */
export async function bestOfAlternating(measureSubject, measureBaseline, { rounds = 2, before = async () => {} } = {}) {
  const best = { ops: 0, baselineOps: 0 };
  const subject = async () => {
    await before();
    best.ops = Math.max(best.ops, await measureSubject());
  };
  const baseline = async () => {
    await before();
    best.baselineOps = Math.max(best.baselineOps, await measureBaseline());
  };
  for (let i = 0; i < rounds; i++) {
    const order = i % 2 === 0 ? [baseline, subject] : [subject, baseline];
    for (const measure of order) await measure();
  }
  return best;
}

/** Subject and baseline batches, each measured by opsPerSecond, compared by bestOfAlternating. */
export function compare(subject, baseline, { rounds = 2, ...opts } = {}) {
  return bestOfAlternating(() => opsPerSecond(subject, opts), () => opsPerSecond(baseline, opts), { rounds });
}

/** Runs `concurrency` async callers, each calling `op(i)` in a loop, for `ms`. */
export async function concurrentOpsPerSecond(op, { concurrency = 1, ms = 1000 } = {}) {
  const start = process.hrtime.bigint();
  const deadline = start + BigInt(ms) * 1_000_000n;
  let ops = 0;
  let counter = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (process.hrtime.bigint() < deadline) {
        await op(counter++);
        ops++;
      }
    }),
  );
  return ops / (Number(process.hrtime.bigint() - start) / 1e9);
}
