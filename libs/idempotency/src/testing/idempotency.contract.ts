import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { IdempotencyArgumentError, IdempotencyConflictError, IdempotencyInProgressError } from '../errors.js';
import type { IdempotencyStore } from '../idempotency.interfaces.js';
import {
  describeIdempotencyFaults,
  type IdempotencyFault,
  type IdempotencyFaultTarget,
} from './idempotency-faults.contract.js';

/** What a store hands the contract suite. */
export interface IdempotencyContractTarget {
  store: IdempotencyStore;
  close?: () => Promise<void>;
  /**
   * For a store whose record joins the effect's transaction (PostgreSQL): runs `fn` in a
   * transaction that commits, or rolls back when `fn` throws. The suite then checks that the
   * record commits and rolls back with it.
   */
  transaction?: <R>(fn: () => Promise<R>) => Promise<R>;
  /** How to inject faults between a client and the store (required when `faults` are listed). */
  faults?: IdempotencyFaultTarget;
}

export interface IdempotencyContractOptions {
  /**
   * True when the record and the work's effect commit together (PostgreSQL without a store
   * beside it): a failure after the work rolls both back, so a repeat runs again. False
   * (default): such a failure leaves the key in progress until its lease ends.
   */
  atomicWithEffect?: boolean;
  /** The faults to run `run` under; none by default. */
  faults?: readonly IdempotencyFault[];
}

/**
 * A work function that counts its calls and resolves when told. `started` resolves at its first
 * call: a test waits for it instead of polling `calls()`.
 */
export function deferredWork<R>(result: R): {
  work: () => Promise<R>;
  calls: () => number;
  started: Promise<void>;
  finish: () => void;
} {
  let calls = 0;
  let finish!: () => void;
  let start!: () => void;
  const gate = new Promise<void>((resolve) => (finish = resolve));
  const started = new Promise<void>((resolve) => (start = resolve));
  return {
    work: async () => {
      calls++;
      start();
      await gate;
      return result;
    },
    calls: () => calls,
    started,
    finish: () => finish(),
  };
}

/** Resolves once `work` started; fails at once if `running` settled without starting it. */
function workStarted(work: { started: Promise<void> }, running: Promise<unknown>): Promise<void> {
  return Promise.race([
    work.started,
    running.then(
      (outcome) => Promise.reject(new Error(`the run answered without starting the work: ${JSON.stringify(outcome)}`)),
      (error: unknown) => Promise.reject(new Error(`the run failed without starting the work: ${String(error)}`)),
    ),
  ]);
}

/**
 * The behavioural contract of IdempotencyStore, run unchanged against every store. `setup` runs
 * once (beforeAll), `close` once (afterAll); every test uses fresh keys, so the suite runs
 * against a shared server.
 *
 * ```ts
 * describeIdempotencyStoreContract('memory', () => ({ store: new MemoryIdempotencyStore() }));
 * ```
 */
export function describeIdempotencyStoreContract(
  label: string,
  setup: () => IdempotencyContractTarget | Promise<IdempotencyContractTarget>,
  options: IdempotencyContractOptions = {},
): void {
  describe(`IdempotencyStore contract: ${label}`, () => {
    let target: IdempotencyContractTarget | undefined;
    const store = (): IdempotencyStore => {
      if (!target) throw new Error('describeIdempotencyStoreContract: setup did not return a target');
      return target.store;
    };
    const run = randomUUID().slice(0, 8);
    let n = 0;
    const key = () => `contract-${run}-${++n}`;

    beforeAll(async () => {
      target = await setup();
    });

    afterAll(async () => {
      await target?.close?.();
    });

    it('runs the work once and hands every repeat the first result', async () => {
      const k = key();
      let calls = 0;
      const result = { id: 'u1', nested: { list: [1, 'two', null, true], n: 1.5 } };
      const work = async () => (calls++, result);
      expect(await store().run({ key: k, fingerprint: 'f' }, work)).toEqual({ result, replayed: false });
      for (let i = 0; i < 3; i++) {
        expect(await store().run({ key: k, fingerprint: 'f' }, work)).toEqual({ result, replayed: true });
      }
      expect(calls).toBe(1);
    });

    it.each([
      ['undefined', undefined],
      ['null', null],
      ['a string', 'ok'],
      ['a number', 0],
      ['false', false],
      ['an array', [{ a: 1 }, []]],
      ['unicode', { s: 'ä\u0000😀"\\' }],
    ])('replays %s as an equal value', async (_what, value) => {
      const k = key();
      await store().run({ key: k, fingerprint: 'f' }, async () => value);
      const repeat = await store().run({ key: k, fingerprint: 'f' }, async () => 'again');
      expect(repeat.replayed).toBe(true);
      expect(repeat.result).toEqual(value);
    });

    it('refuses the key for another fingerprint, running nothing', async () => {
      const k = key();
      await store().run({ key: k, fingerprint: 'first' }, async () => 1);
      let ran = false;
      await expect(store().run({ key: k, fingerprint: 'second' }, async () => void (ran = true))).rejects.toThrow(
        IdempotencyConflictError,
      );
      expect(ran).toBe(false);
      expect(await store().run({ key: k, fingerprint: 'first' }, async () => 2)).toEqual({ result: 1, replayed: true });
    });

    it('answers in progress while the first run works, then replays its result', async () => {
      const k = key();
      const first = deferredWork({ done: true });
      const running = store().run({ key: k, fingerprint: 'f' }, first.work);
      await workStarted(first, running);
      let ran = false;
      const error = await store()
        .run({ key: k, fingerprint: 'f' }, async () => void (ran = true))
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(IdempotencyInProgressError);
      expect((error as IdempotencyInProgressError).code).toBe('IDEMPOTENCY_IN_PROGRESS');
      expect(ran).toBe(false);
      first.finish();
      expect(await running).toEqual({ result: { done: true }, replayed: false });
      expect(await store().run({ key: k, fingerprint: 'f' }, async () => ({ done: false }))).toEqual({
        result: { done: true },
        replayed: true,
      });
    });

    it('keeps nothing when the work fails: the error propagates and a repeat runs again', async () => {
      const k = key();
      const failure = new Error('work failed');
      await expect(
        store().run({ key: k, fingerprint: 'f' }, async () => {
          throw failure;
        }),
      ).rejects.toBe(failure);
      expect(await store().run({ key: k, fingerprint: 'f' }, async () => 'second')).toEqual({
        result: 'second',
        replayed: false,
      });
      // Nor does a failed run keep its fingerprint: another request may take the key.
      const other = key();
      await expect(store().run({ key: other, fingerprint: 'a' }, () => Promise.reject(failure))).rejects.toBe(failure);
      expect((await store().run({ key: other, fingerprint: 'b' }, async () => 'b')).replayed).toBe(false);
    });

    it('runs the work again once the key is no longer retained (ttlMs)', async () => {
      const k = key();
      let calls = 0;
      const work = async () => ++calls;
      expect(await store().run({ key: k, fingerprint: 'f', ttlMs: 300 }, work)).toEqual({ result: 1, replayed: false });
      // Poll, never a fixed sleep: the store's clock decides, and the machine may be busy.
      const deadline = Date.now() + 20_000;
      let outcome = await store().run({ key: k, fingerprint: 'f', ttlMs: 300 }, work);
      while (outcome.replayed && Date.now() < deadline) {
        expect(outcome.result).toBe(1);
        await sleep(100);
        outcome = await store().run({ key: k, fingerprint: 'f', ttlMs: 300 }, work);
      }
      expect(outcome).toEqual({ result: 2, replayed: false });
    });

    it('runs the work exactly once for 20 concurrent runs of one key', async () => {
      const k = key();
      const first = deferredWork('once');
      // Every run either starts the work or is turned away while the work is held: the work
      // finishes once each of the 20 is accounted for (a second start counts too, and fails below).
      let answered = 0;
      let allAccounted!: () => void;
      const accounted = new Promise<void>((resolve) => (allAccounted = resolve));
      const account = () => {
        if (answered + first.calls() >= 20) allAccounted();
      };
      const work = () => {
        const running = first.work();
        account();
        return running;
      };
      const outcomes = Promise.allSettled(
        Array.from({ length: 20 }, () =>
          store()
            .run({ key: k, fingerprint: 'f' }, work)
            .finally(() => {
              answered++;
              account();
            }),
        ),
      );
      await accounted;
      first.finish();
      const settled = await outcomes;
      expect(first.calls()).toBe(1);
      const fulfilled = settled.filter((s) => s.status === 'fulfilled').map((s) => s.value);
      const rejected = settled.filter((s) => s.status === 'rejected').map((s) => s.reason as unknown);
      for (const outcome of fulfilled) expect(outcome.result).toBe('once');
      expect(fulfilled.filter((o) => !o.replayed)).toHaveLength(1);
      for (const reason of rejected) expect(reason).toBeInstanceOf(IdempotencyInProgressError);
      expect(await store().run({ key: k, fingerprint: 'f' }, first.work)).toEqual({ result: 'once', replayed: true });
      expect(first.calls()).toBe(1);
    });

    it('keeps keys independent of one another', async () => {
      const [a, b] = [key(), key()];
      expect(await store().run({ key: a, fingerprint: 'f' }, async () => 'a')).toEqual({
        result: 'a',
        replayed: false,
      });
      expect(await store().run({ key: b, fingerprint: 'f' }, async () => 'b')).toEqual({
        result: 'b',
        replayed: false,
      });
      const slow = deferredWork('c');
      const running = store().run({ key: key(), fingerprint: 'f' }, slow.work);
      await workStarted(slow, running);
      // Another key is not held up by one in progress.
      expect(await store().run({ key: key(), fingerprint: 'f' }, async () => 'd')).toEqual({
        result: 'd',
        replayed: false,
      });
      slow.finish();
      await running;
      // Keys that differ only in case, separators or braces are different keys.
      const base = key();
      for (const variant of [base, base.toUpperCase(), `${base}:x`, `{${base}}`, `${base}%7B`]) {
        expect((await store().run({ key: variant, fingerprint: 'f' }, async () => variant)).result).toBe(variant);
      }
    });

    it.each([
      ['an empty key', { key: '', fingerprint: 'f' }],
      ['a key that is no string', { key: { $ne: null }, fingerprint: 'f' }],
      ['a key over 1,024 characters', { key: 'k'.repeat(1025), fingerprint: 'f' }],
      ['a key with a lone surrogate', { key: 'a\uD800', fingerprint: 'f' }],
      ['a key holding U+0000', { key: 'A\u0000B', fingerprint: 'f' }],
      ['an empty fingerprint', { key: 'k', fingerprint: '' }],
      ['a fingerprint over 1,024 characters', { key: 'k', fingerprint: 'f'.repeat(1025) }],
      ['a ttlMs of 0', { key: 'k', fingerprint: 'f', ttlMs: 0 }],
      ['a ttlMs that is no integer', { key: 'k', fingerprint: 'f', ttlMs: 1.5 }],
      ['no request', null],
    ])('refuses %s with an argument error, running nothing', async (_what, request) => {
      let ran = false;
      await expect(store().run(request as never, async () => void (ran = true))).rejects.toThrow(
        IdempotencyArgumentError,
      );
      expect(ran).toBe(false);
    });

    if (options.atomicWithEffect) {
      it('a result that is no JSON value rolls the run back: a repeat runs again', async () => {
        const k = key();
        await expect(store().run({ key: k, fingerprint: 'f' }, async () => 1n)).rejects.toThrow(
          IdempotencyArgumentError,
        );
        expect(await store().run({ key: k, fingerprint: 'f' }, async () => 2)).toEqual({ result: 2, replayed: false });
      });
    } else {
      it('a result that is no JSON value leaves the key in progress (the effect may have happened)', async () => {
        const k = key();
        await expect(store().run({ key: k, fingerprint: 'f' }, async () => 1n)).rejects.toThrow(
          IdempotencyArgumentError,
        );
        let ran = false;
        await expect(store().run({ key: k, fingerprint: 'f' }, async () => void (ran = true))).rejects.toThrow(
          IdempotencyInProgressError,
        );
        expect(ran).toBe(false);
      });
    }

    if (options.atomicWithEffect) {
      it('keeps the record only when the transaction it joined commits', async () => {
        const transaction = target?.transaction;
        if (transaction === undefined)
          throw new Error('atomicWithEffect needs the target to say how to run a transaction');
        const rolledBack = key();
        await expect(
          transaction(async () => {
            await store().run({ key: rolledBack, fingerprint: 'f' }, async () => 'first');
            throw new Error('the use case fails after the run');
          }),
        ).rejects.toThrow('the use case fails after the run');
        expect(await store().run({ key: rolledBack, fingerprint: 'f' }, async () => 'again')).toEqual({
          result: 'again',
          replayed: false,
        });

        const committed = key();
        await transaction(() => store().run({ key: committed, fingerprint: 'f' }, async () => 'kept'));
        expect(await store().run({ key: committed, fingerprint: 'f' }, async () => 'again')).toEqual({
          result: 'kept',
          replayed: true,
        });
      });
    }

    if (options.faults?.length) describeIdempotencyFaults(() => target, options.faults, key, options.atomicWithEffect);
  });
}
