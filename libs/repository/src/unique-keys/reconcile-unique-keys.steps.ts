// The two sweeps of reconcileUniqueKeys, page by page: each page of reservations (or of
// aggregates) is read as one set, its owners (or its values' reservations) are looked up in one
// batch, and only the changes go out one by one, a bounded number at a time. Nothing outlives its
// page but the counts, the breaches found and a fixed-size filter of the values seen.
import { forEachLimited, inBatches, readAhead, type ProgressMeter } from '@ddd-kit/core/internal';
import type { AggregateRoot } from '../aggregate/aggregate-root.js';
import type { AggregateId } from '../aggregate/aggregate.interfaces.js';
import { InvalidAggregateIdError } from '../errors.js';
import type { UniqueKeyedRepository, UniqueKeysReconciliationReport } from './reconcile-unique-keys.interfaces.js';
import { SeenValues } from './seen-values.js';
import type { UniqueKeyOwner, UniqueKeyReservations } from './unique-key.interfaces.js';
import type { UniqueKeyReserver } from './unique-key.reserver.js';

type Stored = Awaited<ReturnType<UniqueKeyReservations['getValue']>>;
/** What a lookup of one item gave: its answer, or the error that stands for it. */
type Answer<R> = { value: R } | { error: unknown };
export type Fail = (error: unknown, what: { name: string; key?: string; id?: AggregateId }) => void;

export interface Sweep<ID extends AggregateId, T extends AggregateRoot<ID, any>> {
  repository: UniqueKeyedRepository<ID, T>;
  reserver: UniqueKeyReserver;
  report: UniqueKeysReconciliationReport;
  fail: Fail;
  dryRun: boolean;
  pageSize: number;
  concurrency: number;
  progress: ProgressMeter;
  /** The clock graceMs is judged by. */
  now: () => number;
}

/** Step 1: releases the reservations of key `name` whose owner does not hold them. */
export async function releaseOrphans<ID extends AggregateId, T extends AggregateRoot<ID, any>>(
  sweep: Sweep<ID, T>,
  name: string,
  store: UniqueKeyReservations,
  graceMs: number,
): Promise<void> {
  const { reserver, report, fail, dryRun, concurrency } = sweep;
  // The next page is listed and its owners loaded while this one is compared and released (a
  // release changes no aggregate, and only records of its own page).
  for await (const { size, mine, owners } of readAhead(ownedPages(sweep, store))) {
    sweep.progress.add(size);
    report.scanned += mine.length;
    // A value the store keeps under another key (a PrepareKey that case-folds): asked in one batch.
    const valueOf = new Map<(typeof mine)[number], string | undefined>();
    const elsewhere: string[] = [];
    for (const record of mine) {
      const loaded = owners.get(String(record.value.value.id));
      if (loaded === undefined || 'error' in loaded) continue;
      const value = loaded.value === null ? undefined : reserver.valuesOf(loaded.value).get(name);
      valueOf.set(record, value);
      if (value !== undefined && value !== record.key) elsewhere.push(value);
    }
    const reservedAs = await readMany(store, [...new Set(elsewhere)], concurrency);
    const release: typeof mine = [];
    for (const record of mine) {
      const owner = record.value.value;
      const loaded = owners.get(String(owner.id));
      if (loaded !== undefined && 'error' in loaded) {
        fail(loaded.error, { name, key: record.key });
        continue;
      }
      const value = valueOf.get(record);
      const found = value === undefined || value === record.key ? undefined : reservedAs.get(value);
      if (found !== undefined && 'error' in found) {
        fail(found.error, { name, key: record.key });
        continue;
      }
      // Live when the aggregate's value is this key — as the store sees it.
      if (value !== undefined && (value === record.key || sameOwner(found?.value?.value, owner))) {
        report.live++;
      } else if (typeof owner.at === 'number' && sweep.now() - owner.at < graceMs) {
        report.spared++;
      } else if (dryRun) {
        report.released++;
      } else {
        release.push(record);
      }
    }
    await forEachLimited(release, concurrency, async (record) => {
      try {
        if (await store.rollback(record.key, record.value.value)) report.released++;
      } catch (error) {
        fail(error, { name, key: record.key });
      }
    });
  }
}

/** The pages of `store`'s records of this sweep's aggregate type, each with its owners (loadMany). */
async function* ownedPages<ID extends AggregateId, T extends AggregateRoot<ID, any>>(
  sweep: Sweep<ID, T>,
  store: UniqueKeyReservations,
) {
  const { reserver, pageSize } = sweep;
  for await (const page of inBatches(store.records({ pageSize }), pageSize)) {
    const mine = page.filter(({ value }) => {
      const owner = value.value as Partial<UniqueKeyOwner> | null;
      // Another type's reservation, or an expired one (it holds nothing): not this sweep's.
      return (
        owner !== null && typeof owner === 'object' && owner.aggregate === reserver.aggregateName && !value.isExpired()
      );
    });
    const owners = await loadMany(
      sweep,
      mine.map((record) => record.value.value.id),
    );
    yield { size: page.length, mine, owners };
  }
}

/** One entry of step 2: an aggregate's value of one key. */
interface Held<T> {
  aggregate: T;
  name: string;
  key: string;
  heldBy?: { aggregate: string; id: AggregateId };
}

/**
 * Step 2: reserves again each aggregate's value of the keys `names` that has no reservation in
 * `storeOf(name)`; reports those held by another aggregate, and (after a second, filtered sweep,
 * only when the first saw a value twice) those that several aggregates share.
 */
export async function restoreMissing<ID extends AggregateId, T extends AggregateRoot<ID, any>>(
  sweep: Sweep<ID, T>,
  names: readonly string[],
  storeOf: (name: string) => UniqueKeyReservations,
): Promise<void> {
  const { repository, reserver, pageSize } = sweep;
  const seen = new SeenValues();
  const candidates = new Map<string, Set<string>>(names.map((name) => [name, new Set()]));
  // The next page is listed while this one is looked up and restored (a restore changes no aggregate).
  for await (const page of readAhead(inBatches(repository.aggregates({ pageSize }), pageSize))) {
    sweep.progress.add(page.length);
    const entries: Array<Held<T>> = [];
    for (const aggregate of page) {
      for (const [name, key] of reserver.valuesOf(aggregate)) {
        const mayShare = candidates.get(name);
        if (key === undefined || mayShare === undefined) continue;
        if (!seen.add(`${name}\0${key}`)) mayShare.add(key);
        entries.push({ aggregate, name, key });
      }
    }
    // A value twice in one page is looked up again after the first one's restore, as one at a
    // time would see it: rounds of distinct values.
    for (let round = entries; round.length > 0;) {
      const distinct = new Set<string>();
      const now: typeof entries = [];
      const later: typeof entries = [];
      for (const entry of round) {
        const id = `${entry.name}\0${entry.key}`;
        (distinct.has(id) ? later : now).push(entry);
        distinct.add(id);
      }
      await restoreRound(sweep, now, storeOf);
      round = later;
    }
    for (const { name, key, aggregate, heldBy } of entries)
      if (heldBy !== undefined) sweep.report.heldByOther.push({ name, key, id: aggregate.id, holder: heldBy });
  }
  const found = [...candidates.values()].some((keys) => keys.size > 0);
  if (found) await reportShared(sweep, candidates);
}

/** Looks up the reservations of `entries` (distinct values) in one batch per key, and restores the missing ones. */
async function restoreRound<ID extends AggregateId, T extends AggregateRoot<ID, any>>(
  sweep: Sweep<ID, T>,
  entries: Array<Held<T>>,
  storeOf: (name: string) => UniqueKeyReservations,
): Promise<void> {
  const { reserver, report, fail, dryRun, concurrency } = sweep;
  const missing: Array<Held<T>> = [];
  for (const name of new Set(entries.map((entry) => entry.name))) {
    const mine = entries.filter((entry) => entry.name === name);
    let current: Map<string, Answer<Stored>>;
    try {
      current = await readMany(storeOf(name), [...new Set(mine.map((entry) => entry.key))], concurrency);
    } catch (error) {
      for (const entry of mine) fail(error, { name, key: entry.key, id: entry.aggregate.id }); // storeOf failed
      continue;
    }
    for (const entry of mine) {
      const answer = current.get(entry.key)!;
      if ('error' in answer) {
        fail(answer.error, { name, key: entry.key, id: entry.aggregate.id });
      } else if (answer.value !== undefined && !answer.value.isExpired()) {
        const holder = answer.value.value;
        if (!reserver.isOwner(holder, entry.aggregate.id))
          entry.heldBy = { aggregate: holder.aggregate, id: holder.id };
      } else if (dryRun) {
        report.restored++;
      } else {
        missing.push(entry);
      }
    }
  }
  const taken: Array<Held<T> & { owner: UniqueKeyOwner }> = [];
  await forEachLimited(missing, concurrency, async (entry) => {
    const owner = reserver.owner(entry.aggregate.id);
    try {
      // Taken meanwhile: the next run judges it.
      if (await storeOf(entry.name).prepare(entry.key, owner)) taken.push({ ...entry, owner });
    } catch (error) {
      fail(error, { name: entry.name, key: entry.key, id: entry.aggregate.id });
    }
  });
  // The aggregates may have moved on while this ran: undo a restore one no longer needs.
  const now = await loadMany(
    sweep,
    taken.map((entry) => entry.aggregate.id),
  );
  await forEachLimited(taken, concurrency, async ({ aggregate, name, key, owner }) => {
    try {
      const loaded = now.get(String(aggregate.id))!;
      if ('error' in loaded) throw loaded.error;
      if (loaded.value !== null && reserver.valuesOf(loaded.value).get(name) === key) report.restored++;
      else await storeOf(name).rollback(key, owner);
    } catch (error) {
      fail(error, { name, key, id: aggregate.id });
    }
  });
}

/** The values among `candidates` that several aggregates hold, from a second sweep of the aggregates. */
async function reportShared<ID extends AggregateId, T extends AggregateRoot<ID, any>>(
  sweep: Sweep<ID, T>,
  candidates: Map<string, Set<string>>,
): Promise<void> {
  const holders = new Map<string, Map<string, AggregateId[]>>([...candidates.keys()].map((name) => [name, new Map()]));
  for await (const aggregate of sweep.repository.aggregates({ pageSize: sweep.pageSize })) {
    for (const [name, key] of sweep.reserver.valuesOf(aggregate)) {
      if (key === undefined || !candidates.get(name)?.has(key)) continue;
      const ids = holders.get(name)!;
      ids.set(key, [...(ids.get(key) ?? []), aggregate.id]);
    }
  }
  for (const [name, byKey] of holders) {
    for (const [key, ids] of byKey) if (ids.length > 1) sweep.report.shared.push({ name, key, ids });
  }
}

/**
 * The aggregates of `ids` by `String(id)` (null: none stored), in one batch when the repository
 * can (findByIds); else, or when the batch failed, one findById each, so that an error stands
 * for its own id only. An id that cannot be an aggregate's is none.
 */
async function loadMany<ID extends AggregateId, T>(
  sweep: { repository: UniqueKeyedRepository<ID, T>; concurrency: number },
  ids: readonly AggregateId[],
): Promise<Map<string, Answer<T | null>>> {
  const { repository, concurrency } = sweep;
  const wanted = [...new Set(ids.filter((id) => id !== undefined))] as ID[];
  const answers = new Map<string, Answer<T | null>>();
  if (wanted.length === 0) return answers;
  if (typeof repository.findByIds === 'function') {
    try {
      const found = await repository.findByIds(wanted);
      for (const id of wanted) answers.set(String(id), { value: found.get(String(id)) ?? null });
      return answers;
    } catch {
      // Asked one by one below: each id gets its own answer or error.
    }
  }
  await forEachLimited(wanted, concurrency, async (id) => {
    try {
      answers.set(String(id), { value: await repository.findById(id) });
    } catch (error) {
      answers.set(String(id), error instanceof InvalidAggregateIdError ? { value: null } : { error });
    }
  });
  return answers;
}

/** The reservations of `keys` in one batch when the store can (getValues); else, or when it failed, one getValue each. */
async function readMany(
  store: UniqueKeyReservations,
  keys: readonly string[],
  concurrency: number,
): Promise<Map<string, Answer<Stored>>> {
  const answers = new Map<string, Answer<Stored>>();
  if (keys.length === 0) return answers;
  if (typeof store.getValues === 'function') {
    try {
      const found = await store.getValues(keys);
      for (const key of keys) answers.set(key, { value: found.get(key) });
      return answers;
    } catch {
      // Asked one by one below.
    }
  }
  await forEachLimited(keys, concurrency, async (key) => {
    try {
      answers.set(key, { value: await store.getValue(key) });
    } catch (error) {
      answers.set(key, { error });
    }
  });
  return answers;
}

function sameOwner(a: Partial<UniqueKeyOwner> | undefined, b: Partial<UniqueKeyOwner>): boolean {
  return a !== undefined && a.aggregate === b.aggregate && a.id === b.id && a.at === b.at;
}
