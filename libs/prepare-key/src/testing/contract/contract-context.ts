import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from '@jest/globals';
import type { PrepareKey } from '../../prepare-key.js';
import type { PrepareKeyFactory } from '../../prepare-key.factory.js';
import type { PreparedRecord } from '../../prepare-key.interfaces.js';
import { toTtlAt } from '../../prepared-value.js';

/**
 * Short, real TTLs: backends may decide expiry with their own server's clock, which no test
 * can move. A record is written with a ttlAt this far ahead, and read as expired only once the
 * local clock is EXPIRY_MARGIN_MS past it: the margin covers the difference between the local
 * clock and the store's (a backend's `get` may estimate the server's time from its last reply,
 * which is late by that reply's trip), so a slow machine only makes the wait longer.
 */
export const SHORT_TTL_MS = 300;
export const EXPIRY_MARGIN_MS = 1_000;
export const RACERS = 200;

/** How long until the local clock is past `ttlAt` by the margin: expired by the store's clock too. */
const msUntilExpired = (ttlAt: number): number => Math.max(0, ttlAt - Date.now()) + EXPIRY_MARGIN_MS;

/** A clock the test owns and the backend decides expiry with (see PrepareKeyContractTarget.clock). */
export interface PrepareKeyContractClock {
  now(): number;
  advance(ms: number): void | Promise<void>;
}

export type Owner = { owner: string; n?: number };

/** A set-up made before the cases ran: its PrepareKey, and what the set-up returned. */
export interface InAdvance<T> {
  pk: PrepareKey<Owner>;
  result: T;
}

/** What every group of cases of the contract uses: the backend's factory and a few helpers on it. */
export interface ContractContext {
  readonly label: string;
  factory(): PrepareKeyFactory;
  /** A name no other test of this run uses. */
  uniqueName(): string;
  /** A PrepareKey under a fresh name. */
  fresh<V = Owner>(name?: string): PrepareKey<V>;
  /** The time the backend decides expiry with, as far as the suite knows it (epoch ms). */
  now(): number;
  /** Resolves once `ttlAt` has passed for the backend: the target's clock moved past it, or real time waited out. */
  expire(ttlAt: number): Promise<void>;
  /**
   * Registers a set-up that lets real time pass (records that expire by the store's clock), to
   * be declared beside the cases (in a describe block) and read inside one. All of a run's
   * set-ups run once, before its cases (see `setUpInAdvance`): at once, so that their waits
   * overlap instead of adding up, or one after the other when the suite moves the backend's
   * clock (one set-up's move must not land inside another's steps). Each gets a PrepareKey under
   * a fresh name.
   */
  inAdvance<T>(setUp: (pk: PrepareKey<Owner>) => Promise<T>): () => InAdvance<T>;
  /** `inAdvance`: every entry reserved with one short TTL, read once all of them have expired; the result is that ttlAt. */
  expired(entries: Array<[string, Owner]>): () => InAdvance<number>;
  /** Runs every registered set-up (in the suite's beforeAll, once the backend is set up). */
  setUpInAdvance(): Promise<void>;
  listAll<V>(pk: PrepareKey<V>, pageSize?: number): Promise<Array<PreparedRecord<V>>>;
  snapshot<V>(pk: PrepareKey<V>): Promise<Array<{ key: string; value: V; ttlAt: number }>>;
}

type Outcome = { ok: true; value: InAdvance<unknown> } | { ok: false; error: unknown };

/** The helpers over a factory that `factory()` returns once the suite's setup ran. */
export function contractContext(
  label: string,
  run: string,
  factory: () => PrepareKeyFactory,
  clock: () => PrepareKeyContractClock | undefined,
): ContractContext {
  const now = (): number => clock()?.now() ?? Date.now();
  const expire = async (ttlAt: number): Promise<void> => {
    const owned = clock();
    if (owned === undefined) await sleep(msUntilExpired(ttlAt));
    else await owned.advance(Math.max(0, ttlAt - owned.now()));
  };
  let sequence = 0;
  const uniqueName = (): string => `pkc_${run}_${++sequence}`;
  const fresh = <V = Owner>(name = uniqueName()) => factory().create<V>(name);
  const listAll = async <V>(pk: PrepareKey<V>, pageSize?: number): Promise<Array<PreparedRecord<V>>> => {
    const out: Array<PreparedRecord<V>> = [];
    for await (const record of pk.records(pageSize === undefined ? {} : { pageSize })) out.push(record);
    return out.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  };

  const setUps: Array<{ setUp: (pk: PrepareKey<Owner>) => Promise<unknown>; outcome?: Outcome }> = [];
  const inAdvance = <T>(setUp: (pk: PrepareKey<Owner>) => Promise<T>): (() => InAdvance<T>) => {
    const entry: (typeof setUps)[number] = { setUp };
    setUps.push(entry);
    return () => {
      if (entry.outcome === undefined) throw new Error('describePrepareKeyContract: a set-up in advance did not run');
      // A set-up that failed fails the cases that read it, not the whole suite.
      if (!entry.outcome.ok) throw entry.outcome.error;
      return entry.outcome.value as InAdvance<T>;
    };
  };

  return {
    label,
    factory,
    uniqueName,
    fresh,
    now,
    expire,
    inAdvance,
    expired: (entries) =>
      inAdvance(async (pk) => {
        const ttlAt = now() + SHORT_TTL_MS;
        for (const [key, value] of entries) {
          expect(await pk.prepare(key, toTtlAt(value, ttlAt))).toBe(true);
        }
        await expire(ttlAt);
        return ttlAt;
      }),
    setUpInAdvance: async () => {
      const run = async (entry: (typeof setUps)[number]) => {
        const pk = fresh();
        try {
          entry.outcome = { ok: true, value: { pk, result: await entry.setUp(pk) } };
        } catch (error) {
          entry.outcome = { ok: false, error };
        }
      };
      if (clock() === undefined) await Promise.all(setUps.map(run));
      else for (const entry of setUps) await run(entry);
    },
    listAll,
    snapshot: async <V>(pk: PrepareKey<V>) =>
      (await listAll(pk)).map((r) => ({ key: r.key, value: r.value.value, ttlAt: r.value.ttlAt })),
  };
}
