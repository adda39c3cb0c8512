import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { PrepareKey } from '../prepare-key.js';
import type { PrepareKeyFactory } from '../prepare-key.factory.js';
import { describeConcurrencyCases } from './contract/concurrency.cases.js';
import { contractContext, type Owner, type PrepareKeyContractClock } from './contract/contract-context.js';
import { describeRecordCases } from './contract/records.cases.js';
import { describeReprepareCases } from './contract/reprepare.cases.js';
import { describeReservationCases } from './contract/reservations.cases.js';
import { describeUsingPrepareCases } from './contract/using-prepare.cases.js';
import { describeValueCases } from './contract/values.cases.js';
import {
  describePrepareKeyFaults,
  type PrepareKeyFault,
  type PrepareKeyFaultTarget,
} from './prepare-key-faults.contract.js';

/** What a backend hands the contract suite: its factory, and how to close its clients. */
export interface PrepareKeyContractTarget {
  factory: PrepareKeyFactory;
  close?: () => Promise<void>;
  /** How to inject faults between a client and the store (required when `faults` are listed). */
  faults?: PrepareKeyFaultTarget;
  /**
   * The clock the factory decides expiry with, when the test owns it (a fake clock given to the
   * backend, as `new MemoryPrepareKeyFactory({ clock: () => clock.now() })`): the suite then
   * moves it past each ttlAt instead of waiting for real time. Leave it out for a backend whose
   * server's clock decides expiry.
   */
  clock?: PrepareKeyContractClock;
}

export interface PrepareKeyContractOptions {
  /** The faults to run every operation under (see PrepareKeyFault); none by default. */
  faults?: readonly PrepareKeyFault[];
  /**
   * Runs the cases of each fault at once (Jest's `it.concurrent`, up to its maxConcurrency)
   * instead of one after the other: each case waits out a client timeout or two, so this is
   * most of the suite's time. Only for a fault target whose `arm` counts and faults only the
   * commands about the PrepareKey it names (or that opens an injector per name), and whose
   * `open` gives each case connections of its own (a fault that holds a connection then holds no
   * other case's commands). Off by default.
   */
  concurrentFaults?: boolean;
}

/**
 * The one behavioural contract of `PrepareKey`, run unchanged against every backend.
 *
 * `setup` runs once (beforeAll) and `close` once (afterAll). Every test creates its
 * PrepareKey under a fresh unique name, so tests never see each other's records and the
 * suite can run against a shared server. Expiry is real time (a backend's server may decide
 * it) unless the target hands the suite its clock: right after `setup`, the records that the
 * cases need expired are written with short TTLs, all at once, and the suite waits a few seconds
 * for them to expire; they must stay readable (retained) for the rest of the run.
 *
 * ```ts
 * describePrepareKeyContract('redis', async () => {
 *   const redis = new Redis(url);
 *   return { factory: new RedisPrepareKeyFactory(redis), close: async () => void redis.disconnect() };
 * });
 * ```
 */
export function describePrepareKeyContract(
  label: string,
  setup: () => PrepareKeyContractTarget | Promise<PrepareKeyContractTarget>,
  options: PrepareKeyContractOptions = {},
): void {
  describe(`PrepareKey contract: ${label}`, () => {
    let target: PrepareKeyContractTarget | undefined;
    const factory = (): PrepareKeyFactory => {
      if (!target) throw new Error('describePrepareKeyContract: setup did not return a target');
      return target.factory;
    };
    const context = contractContext(label, randomUUID().slice(0, 8), factory, () => target?.clock);
    const { uniqueName } = context;

    beforeAll(async () => {
      target = await setup();
      // What PrepareKeyModule does at bootstrap: a store that can lose its data is sealed before
      // the first case (on a Cluster that takes a while; the cases with short TTLs must not wait for it).
      await target?.factory.restoreIfLost?.();
      await context.setUpInAdvance();
    });

    afterAll(async () => {
      await target?.close?.();
    });

    it('creates a PrepareKey that carries its name', () => {
      const name = uniqueName();
      const pk = factory().create(name);
      expect(pk).toBeInstanceOf(PrepareKey);
      expect(pk.name).toBe(name);
    });

    it('two PrepareKeys created under one name share their records', async () => {
      const name = uniqueName();
      const a = factory().create<Owner>(name);
      const b = factory().create<Owner>(name);
      expect(await a.prepare('k', { owner: 'a' })).toBe(true);
      expect(await b.get('k')).toEqual({ owner: 'a' });
      expect(await b.prepare('k', { owner: 'b' })).toBe(false);
    });

    it('keeps different names apart, whatever the separators in names and keys', async () => {
      const base = uniqueName();
      const pairs: Array<[string, string]> = [
        [base, 'x:k'],
        [`${base}:x`, 'k'],
        [`${base}_x`, 'k'],
        [base, 'x_k'],
        [`${base}.x`, 'k'],
        [base, 'x.k'],
      ];
      for (const [name, key] of pairs) {
        expect(
          await factory()
            .create<Owner>(name)
            .prepare(key, { owner: `${name}/${key}` }),
        ).toBe(true);
      }
      for (const [name, key] of pairs) {
        expect(await factory().create<Owner>(name).get(key)).toEqual({ owner: `${name}/${key}` });
      }
      expect(await factory().create<Owner>(`${base}:x`).get('x:k')).toBeUndefined();
    });

    describeReservationCases(context);
    describeReprepareCases(context);
    describeUsingPrepareCases(context);
    describeValueCases(context);
    describeRecordCases(context);

    if (options.faults !== undefined && options.faults.length > 0) {
      describePrepareKeyFaults(
        options.faults,
        () => {
          if (!target?.faults)
            throw new Error(
              `describePrepareKeyContract('${label}'): faults are listed but setup returned no faults target`,
            );
          return { clean: factory(), faults: target.faults };
        },
        uniqueName,
        options.concurrentFaults ?? false,
      );
    }

    describeConcurrencyCases(context);
  });
}
