// Memory backend `prepare` beside a bare Map doing the same work: look the key up, check
// expiry, store the value's canonical JSON (the same safe-stable-stringify configuration the
// library uses) with its ttlAt — in an async function awaited the same way. What the ratio
// prices is the library's own layer: key/value/ttlAt validation and two async hops.
import { configure } from 'safe-stable-stringify';
import { MemoryPrepareKeyFactory, TTL_FOREVER } from '@ddd-kit/prepare-key';
import { compare } from './util.js';

const stringify = configure({ strict: true, circularValue: Error, bigint: false, deterministic: true });
// Both sides start over on a new store every RESET_EVERY keys, so neither pays for a huge map.
const RESET_EVERY = 200_000;
const BATCH = 100;

function library() {
  let pk;
  let n = RESET_EVERY;
  return (value) => {
    if (n++ >= RESET_EVERY) {
      pk = new MemoryPrepareKeyFactory().create('bench');
      n = 1;
    }
    return pk.prepare(`user-${n}`, value);
  };
}

function bareMap(encode = stringify) {
  let map;
  let n = RESET_EVERY;
  async function prepare(key, value) {
    const record = map.get(key);
    if (record !== undefined && record.ttlAt > Date.now()) return false;
    map.set(key, { value: encode(value), ttlAt: TTL_FOREVER });
    return true;
  }
  return (value) => {
    if (n++ >= RESET_EVERY) {
      map = new Map();
      n = 1;
    }
    return prepare(`user-${n}`, value);
  };
}

export default async function ({ log }) {
  const value = { userId: 'u-1f3a9c', tenant: 'acme', since: 1_700_000_000_000 };
  const rows = [];

  {
    const subject = library();
    const baseline = bareMap();
    const result = await compare(
      async () => {
        if ((await subject(value)) !== true) throw new Error('prepare of a fresh key returned false');
      },
      async () => {
        if ((await baseline(value)) !== true) throw new Error('bare Map prepare returned false');
      },
      { ms: 1000, rounds: 3 },
    );
    rows.push({
      case: 'prepare, fresh keys, awaited one by one',
      subject: 'MemoryPrepareKeyFactory',
      baseline: 'bare Map + canonical JSON',
      ...result,
      target: 0.5,
    });
  }

  {
    const subject = library();
    const baseline = bareMap();
    const batch = (prepare) => async () => {
      const results = await Promise.all(Array.from({ length: BATCH }, () => prepare(value)));
      if (results.some((won) => won !== true)) throw new Error('prepare of a fresh key returned false');
    };
    const result = await compare(batch(subject), batch(baseline), { ms: 1000, rounds: 3, opsPerBatch: BATCH });
    rows.push({
      case: `prepare, fresh keys, ${BATCH} concurrent per batch`,
      subject: 'MemoryPrepareKeyFactory',
      baseline: 'bare Map + canonical JSON',
      ...result,
      target: 0.5,
    });
  }

  {
    // For scale only: JSON.stringify is faster but not canonical ({a,b} and {b,a} differ).
    const subject = library();
    const baseline = bareMap(JSON.stringify);
    const result = await compare(
      async () => void (await subject(value)),
      async () => void (await baseline(value)),
      { ms: 1000, rounds: 3 },
    );
    rows.push({
      case: 'prepare, fresh keys, awaited one by one',
      subject: 'MemoryPrepareKeyFactory',
      baseline: 'bare Map + JSON.stringify',
      ...result,
      note: 'for scale: JSON.stringify is not canonical',
    });
  }

  for (const row of rows) log(`${row.case}: ${(row.ops / row.baselineOps).toFixed(2)}×`);
  return rows;
}
