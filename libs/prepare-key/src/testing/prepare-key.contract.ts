import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { PrepareKey } from '../prepare-key.js';
import type { PrepareKeyFactory } from '../prepare-key.factory.js';
import { describeConcurrencyCases } from './contract/concurrency.cases.js';
import { contractContext, type Owner } from './contract/contract-context.js';
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
}

export interface PrepareKeyContractOptions {
  /** The faults to run every operation under (see PrepareKeyFault); none by default. */
  faults?: readonly PrepareKeyFault[];
}

/**
 * The one behavioural contract of `PrepareKey`, run unchanged against every backend.
 *
 * `setup` runs once (beforeAll) and `close` once (afterAll). Every test creates its
 * PrepareKey under a fresh unique name, so tests never see each other's records and the
 * suite can run against a shared server.
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
    const context = contractContext(label, randomUUID().slice(0, 8), factory);
    const { uniqueName } = context;

    beforeAll(async () => {
      target = await setup();
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
      );
    }

    describeConcurrencyCases(context);
  });
}
