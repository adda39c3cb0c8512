import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { type PrepareKey, reconcileReservations, TTL_FOREVER } from '@ddd-kit/prepare-key';
import { uniqueName } from '../support/servers.js';
import { sleep } from '../support/wait.js';
import { LABELLED_BACKENDS, openBackend, type SharedBackend } from './support/shared-backends.js';

type Owner = { owner: string };

/**
 * Records, dead owners among them, and dead-owner records a live owner re-prepares during the
 * sweep: some from inside `isLive` (after the sweep saw the dead value, before its rollback),
 * some from a concurrent caller at random moments. Smaller on the MongoDB-wire emulator
 * (jongodb), whose updates and inserts copy the collection: one takes ~30 ms at 1,000 documents
 * and most of a second at 10,000 — and a rollback is an update (it leaves a tombstone).
 */
const SIZES: Record<SharedBackend, { records: number; dead: number; insideIsLive: number; concurrently: number }> = {
  redis: { records: 10_000, dead: 1_000, insideIsLive: 100, concurrently: 100 },
  cluster: { records: 10_000, dead: 1_000, insideIsLive: 100, concurrently: 100 },
  mongo: { records: 1_000, dead: 100, insideIsLive: 5, concurrently: 5 },
};

describe.each(LABELLED_BACKENDS)('reconcileReservations on %s', (_label, backend) => {
  let opened: Awaited<ReturnType<typeof openBackend>>;

  beforeAll(async () => {
    opened = await openBackend(backend, uniqueName(`reconcile_${backend}`));
  });

  afterAll(async () => {
    await opened?.close();
  });

  const { records: RECORDS, dead: DEAD, insideIsLive, concurrently } = SIZES[backend];

  it(`of ${RECORDS} records with ${DEAD} dead owners, releases exactly those, while live owners re-prepare some of them`, async () => {
    const name = 'username';
    const keys = Array.from({ length: RECORDS }, (_, i) => `user-${i}`);
    const ownerOf = (i: number) => ({ owner: `o${i}` });
    const deadIndexes = keys.map((_, i) => i).filter((i) => i % (RECORDS / DEAD) === 3);
    expect(deadIndexes).toHaveLength(DEAD);
    await opened.seed(
      name,
      keys.map((key, i) => [key, ownerOf(i)]),
    );
    const pk: PrepareKey<Owner> = opened.factory.create<Owner>(name);

    const deadOwners = new Set(deadIndexes.map((i) => ownerOf(i).owner));
    const takenInsideIsLive = new Set(deadIndexes.slice(0, insideIsLive).map((i) => keys[i]));
    const takenConcurrently = deadIndexes.slice(insideIsLive, insideIsLive + concurrently).map((i) => keys[i]);
    const newOwner = (key: string) => ({ owner: `new-${key}` });

    // A live owner takes the key over: by reprepare while the dead record is still there, else
    // (the sweep released it first) by prepare. Counts the takeovers that came after a release.
    let takenAfterRelease = 0;
    const takeOver = async (key: string, deadValue: Owner) => {
      if (await pk.reprepare(key, deadValue, newOwner(key))) return;
      expect(await pk.prepare(key, newOwner(key))).toBe(true);
      takenAfterRelease++;
    };

    let sweepStarted!: () => void;
    const started = new Promise<void>((resolve) => (sweepStarted = resolve));
    const racer = (async () => {
      await started;
      for (const key of [...takenConcurrently].sort(() => Math.random() - 0.5)) {
        await sleep(Math.random() * 10); // at random moments of the sweep, not all at its start
        await takeOver(key, ownerOf(Number(key.slice('user-'.length))));
      }
    })();

    const [report] = await Promise.all([
      reconcileReservations(pk, async (key, value) => {
        sweepStarted();
        if (!deadOwners.has(value.owner)) return true; // a live owner, the original or a new one
        if (takenInsideIsLive.has(key)) {
          // Between this check and the conditional rollback, a live owner takes the key.
          expect(await pk.reprepare(key, value, newOwner(key))).toBe(true);
        }
        return false;
      }),
      racer,
    ]);

    const survivors = insideIsLive + concurrently;
    expect(report.failed).toBe(0);
    expect(report.expired).toBe(0);
    expect(report.released).toBe(DEAD - survivors + takenAfterRelease);
    expect(report.scanned).toBe(report.live + report.released + report.skipped);
    // Each taken-over record the sweep saw with its dead value was skipped, not released.
    expect(report.skipped).toBeGreaterThanOrEqual(insideIsLive);
    if (backend === 'mongo') {
      // An _id-ordered listing yields each record exactly once...
      expect(report.scanned).toBe(RECORDS);
      expect(report.live + report.skipped).toBe(RECORDS - DEAD + survivors - takenAfterRelease);
    } else {
      // ...SCAN yields every record present throughout at least once (twice while Redis resizes).
      expect(report.scanned).toBeGreaterThanOrEqual(RECORDS);
    }

    // Exactly the dead owners' records are gone; the re-prepared ones hold their new owner.
    const remaining = new Map<string, { owner: string; ttlAt: number }>();
    for await (const record of pk.records())
      remaining.set(record.key, { ...record.value.value, ttlAt: record.value.ttlAt });
    const taken = new Set([...takenInsideIsLive, ...takenConcurrently]);
    const expected = new Map<string, { owner: string; ttlAt: number }>();
    keys.forEach((key, i) => {
      if (taken.has(key)) expected.set(key, { ...newOwner(key), ttlAt: TTL_FOREVER });
      else if (!deadOwners.has(ownerOf(i).owner)) expected.set(key, { ...ownerOf(i), ttlAt: TTL_FOREVER });
    });
    expect(remaining.size).toBe(RECORDS - DEAD + survivors);
    expect(remaining).toEqual(expected);
  }, 60_000);
});
