import { expect } from '@jest/globals';
import type { PrepareKey } from '../../prepare-key.js';
import type { PrepareKeyFactory } from '../../prepare-key.factory.js';
import type { PreparedRecord } from '../../prepare-key.interfaces.js';
import { toTtlAt } from '../../prepared-value.js';

/** Short, real TTLs: backends may decide expiry with their own server's clock. */
export const SHORT_TTL_MS = 300;
export const EXPIRY_MARGIN_MS = 250;
export const RACERS = 200;

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export type Owner = { owner: string; n?: number };

/** What every group of cases of the contract uses: the backend's factory and a few helpers on it. */
export interface ContractContext {
  readonly label: string;
  factory(): PrepareKeyFactory;
  /** A name no other test of this run uses. */
  uniqueName(): string;
  /** A PrepareKey under a fresh name. */
  fresh<V = Owner>(name?: string): PrepareKey<V>;
  /** Reserves every entry with one short TTL and waits until all of them have expired. */
  prepareExpired<V>(pk: PrepareKey<V>, entries: Array<[string, V]>): Promise<number>;
  listAll<V>(pk: PrepareKey<V>, pageSize?: number): Promise<Array<PreparedRecord<V>>>;
  snapshot<V>(pk: PrepareKey<V>): Promise<Array<{ key: string; value: V; ttlAt: number }>>;
}

/** The helpers over a factory that `factory()` returns once the suite's setup ran. */
export function contractContext(label: string, run: string, factory: () => PrepareKeyFactory): ContractContext {
  let sequence = 0;
  const uniqueName = (): string => `pkc_${run}_${++sequence}`;
  const listAll = async <V>(pk: PrepareKey<V>, pageSize?: number): Promise<Array<PreparedRecord<V>>> => {
    const out: Array<PreparedRecord<V>> = [];
    for await (const record of pk.records(pageSize === undefined ? {} : { pageSize })) out.push(record);
    return out.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  };
  return {
    label,
    factory,
    uniqueName,
    fresh: <V = Owner>(name = uniqueName()) => factory().create<V>(name),
    prepareExpired: async <V>(pk: PrepareKey<V>, entries: Array<[string, V]>) => {
      const ttlAt = Date.now() + SHORT_TTL_MS;
      for (const [key, value] of entries) {
        expect(await pk.prepare(key, toTtlAt(value, ttlAt))).toBe(true);
      }
      await sleep(Math.max(0, ttlAt - Date.now()) + EXPIRY_MARGIN_MS);
      return ttlAt;
    },
    listAll,
    snapshot: async <V>(pk: PrepareKey<V>) =>
      (await listAll(pk)).map((r) => ({ key: r.key, value: r.value.value, ttlAt: r.value.ttlAt })),
  };
}
