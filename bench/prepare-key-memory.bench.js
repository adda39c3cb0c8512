// Memory backend `prepare` beside a bare Map doing the same work: look the key up, check
// expiry, store the value's canonical JSON (the same safe-stable-stringify configuration the
// library uses) with its ttlAt — in an async function awaited the same way. What the ratio
// prices is the library's own layer: key/value/ttlAt validation and two async hops.
// Every call reserves a key not reserved before and must answer true.
import { configure } from 'safe-stable-stringify';
import { MemoryPrepareKeyFactory, TTL_FOREVER } from '@ddd-kit/prepare-key';
import { alternate, measureBatches } from './util.js';

const stringify = configure({ strict: true, circularValue: Error, bigint: false, deterministic: true });
// Both sides start over on a new store every RESET_EVERY keys, so neither pays for a huge map;
// the key counter restarts with the store, so every key is fresh in its store.
const RESET_EVERY = 200_000;
const BATCH = 100;
const SLICE_MS = 500;
const PAIRS = 6;
const TIMING = `${SLICE_MS} ms slices, ${PAIRS} alternating pairs; a new store every ${RESET_EVERY.toLocaleString('en-US')} keys`;

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

/** One call awaited at a time; each must answer true. */
const oneByOne = (prepare, value) => () =>
  measureBatches(
    async () => {
      if ((await prepare(value)) !== true) throw new Error('prepare of a fresh key did not answer true');
      return 1;
    },
    { ms: SLICE_MS },
  );

/** BATCH concurrent calls at a time; each must answer true. */
const concurrent = (prepare, value) => () =>
  measureBatches(
    async () => {
      const results = await Promise.all(Array.from({ length: BATCH }, () => prepare(value)));
      for (const won of results) if (won !== true) throw new Error('prepare of a fresh key did not answer true');
      return BATCH;
    },
    { ms: SLICE_MS },
  );

export default async function ({ log }) {
  const value = { userId: 'u-1f3a9c', tenant: 'acme', since: 1_700_000_000_000 };
  const rows = [];

  rows.push({
    case: 'prepare, fresh keys, awaited one by one',
    subject: 'MemoryPrepareKeyFactory',
    baseline: 'bare Map + canonical JSON',
    ...(await alternate(oneByOne(library(), value), oneByOne(bareMap(), value), { pairs: PAIRS })),
    target: 0.5,
    settings: `${TIMING}; forever records`,
  });

  rows.push({
    case: `prepare, fresh keys, ${BATCH} concurrent per batch`,
    subject: 'MemoryPrepareKeyFactory',
    baseline: 'bare Map + canonical JSON',
    ...(await alternate(concurrent(library(), value), concurrent(bareMap(), value), { pairs: PAIRS })),
    target: 0.5,
    settings: `${TIMING}; forever records`,
  });

  // For scale only: JSON.stringify is faster but not canonical ({a,b} and {b,a} differ).
  rows.push({
    case: 'prepare, fresh keys, awaited one by one',
    subject: 'MemoryPrepareKeyFactory',
    baseline: 'bare Map + JSON.stringify',
    ...(await alternate(oneByOne(library(), value), oneByOne(bareMap(JSON.stringify), value), { pairs: PAIRS })),
    settings: `${TIMING}; forever records`,
    note: 'for scale: JSON.stringify is not canonical',
  });

  for (const row of rows) log(`${row.case} vs ${row.baseline}: ${row.ratio.toFixed(2)}×`);
  return rows;
}
