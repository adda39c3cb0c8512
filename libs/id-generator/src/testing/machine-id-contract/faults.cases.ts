import { setTimeout as sleep } from 'node:timers/promises';
import { expect, it } from '@jest/globals';
import { MachineIdLostError } from '../../errors.js';
import {
  expectApplied,
  ScriptedClock,
  settle,
  type FaultKind,
  type FaultyStore,
  type MachineIdContractContext,
} from './contract-context.js';

/** Cases of describeMachineIdDistributorContract (see ../machine-id-distributor.contract.ts). */
export function describeFaultCases(context: MachineIdContractContext): void {
  const { target, ns, request, state, faultDescribe } = context;
  faultDescribe('faults between the client and the store: every answer is right, or an error', () => {
    const kinds: FaultKind[] = ['lost-then-resent', 'lost', 'timeout'];

    it.each(kinds)(
      'distribute, reply %s: the answer, or an error; the instance holds at most the one ID the answer names, and asking again gives that one',
      async (kind) => {
        const namespace = ns();
        const store = await faultyStore(kind);
        try {
          const distributor = store.create();
          await distributor.distribute(request(namespace, 3, 'warm-up')); // connected; tables created
          const fired = store.inject('distribute');
          const outcome = await settle(distributor.distribute(request(namespace, 3, 'faulted')));
          await expectApplied(fired);
          const held = await target().heldBy(namespace, 'faulted');
          // A resent request must get the answer; otherwise an error is right too (a client that
          // retries on its own, as ioredis's Cluster does on a closed connection, may answer).
          if (kind === 'lost-then-resent') expect(outcome.error).toBeUndefined();
          if (outcome.error === undefined) expect(held).toEqual([outcome.value!.machineId]);
          else expect(held.length).toBeLessThanOrEqual(1);
          const again = await target()
            .create()
            .distribute(request(namespace, 3, 'faulted'));
          expect(await target().heldBy(namespace, 'faulted')).toEqual([again.machineId]);
          if (held.length === 1) expect(again.machineId).toBe(held[0]);
        } finally {
          await store.close();
        }
      },
    );

    it('distribute, a reclaim whose reply was lost and resent: the same ID and the same floor (after everything the silent holder could issue)', async () => {
      const namespace = ns();
      const store = await faultyStore('lost-then-resent');
      try {
        const skew = 300;
        const safeGuardMs = 100;
        const ahead = target().create({ safeGuardMs, guardIntervalMs: 30, clock: () => Date.now() + skew });
        await target()
          .create({ safeGuardMs: 60_000 })
          .distribute(request(namespace, 1, 'busy'));
        const boundAtLeast = Date.now() + skew + safeGuardMs; // its clock, read before the request, + its safeGuardMs
        const silent = await ahead.distribute(request(namespace, 1, 'silent'));
        // Past its deadline by the store's clock (a longer wait changes nothing: nobody else asks).
        await sleep(safeGuardMs + 50);
        // The newcomer's clock: behind that bound for its request, past it once the answer is in.
        const start = Date.now();
        const clock = new ScriptedClock([start, start + skew + safeGuardMs + 1_000]);
        const distributor = store.create({ safeGuardMs, guardIntervalMs: 30, clock: clock.now });
        await distributor.revert(state(namespace, 1, 'nobody', 0)); // connected
        const fired = store.inject('distribute');
        const taken = await distributor.distribute(request(namespace, 1, 'newcomer'));
        await expectApplied(fired);
        expect(taken.machineId).toBe(silent.machineId);
        expect(taken.lastTimestamp).toBeGreaterThanOrEqual(boundAtLeast);
        expect(await target().heldBy(namespace, 'newcomer')).toEqual([silent.machineId]);
      } finally {
        await store.close();
      }
    });

    it.each(kinds)(
      'guard, reply %s: resolves (the deadline moved on) or an error, never a false loss',
      async (kind) => {
        const namespace = ns();
        const store = await faultyStore(kind);
        try {
          const distributor = store.create({ safeGuardMs: 5_000, guardIntervalMs: 1_000 });
          const held = await distributor.distribute(request(namespace, 3, 'a'));
          const before = (await target().deadline(namespace, held.machineId))!;
          // A guard with a lease a second longer: the deadline it writes is later than the one
          // above, whatever the store's clock read in between.
          const longer = store.create({ safeGuardMs: 6_000, guardIntervalMs: 1_000 });
          const fired = store.inject('guard');
          const outcome = await settle(longer.guard(state(namespace, 3, 'a', held.machineId)));
          await expectApplied(fired);
          expect(outcome.error).not.toBeInstanceOf(MachineIdLostError);
          if (kind === 'lost-then-resent') expect(outcome.error).toBeUndefined();
          // The store acted in every case: the deadline moved on, the ID is still the holder's.
          expect((await target().deadline(namespace, held.machineId))!).toBeGreaterThan(before);
          expect(await target().owner(namespace, held.machineId)).toBe('a');
        } finally {
          await store.close();
        }
      },
    );

    it.each(kinds)(
      'revert, reply %s: true when this call released the ID (a resend included), or an error; never a false "not held"',
      async (kind) => {
        const namespace = ns();
        const store = await faultyStore(kind);
        try {
          const distributor = store.create();
          const held = await distributor.distribute(request(namespace, 3, 'a'));
          const fired = store.inject('revert');
          const outcome = await settle(distributor.revert(state(namespace, 3, 'a', held.machineId)));
          await expectApplied(fired);
          // Never a false "not held": true, or (not resent) an error.
          if (kind === 'lost-then-resent' || outcome.error === undefined) expect(outcome).toEqual({ value: true });
          expect(await target().owner(namespace, held.machineId)).toBeNull();
          expect(await target().released(namespace)).toEqual([held.machineId]);
        } finally {
          await store.close();
        }
      },
    );

    async function faultyStore(kind: FaultKind): Promise<FaultyStore> {
      return target().faulty(kind);
    }
  });
}
