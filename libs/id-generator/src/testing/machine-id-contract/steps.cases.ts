import { describe, expect, it } from '@jest/globals';
import {
  ClockBackwardsError,
  IdGeneratorOptionsError,
  MachineIdLostError,
  MachineIdOverflowError,
} from '../../errors.js';
import { ScriptedClock, type MachineIdContractContext } from './contract-context.js';

/** Cases of describeMachineIdDistributorContract (see ../machine-id-distributor.contract.ts). */
export function describeStepCases(context: MachineIdContractContext): void {
  const { target, ns, request, state, distributeWhenFree } = context;
  describe('the three steps', () => {
    it('hands distinct IDs to concurrent instances', async () => {
      const namespace = ns();
      const distributor = target().create();
      const results = await Promise.all(
        Array.from({ length: 48 }, (_, i) => distributor.distribute(request(namespace, 6, `instance-${i}`))),
      );
      const ids = results.map((r) => r.machineId);
      expect(new Set(ids).size).toBe(48);
      expect(ids.every((id) => id >= 0 && id < 64)).toBe(true);
      expect(results.every((r) => r.lastTimestamp === 0)).toBe(true);
    });

    it('runs out with small machineBits (MachineIdOverflowError), and a revert frees an ID for the next instance, with its last timestamp', async () => {
      const namespace = ns();
      const distributor = target().create();
      const held = await Promise.all([0, 1, 2, 3].map((i) => distributor.distribute(request(namespace, 2, `i${i}`))));
      expect(held.map((h) => h.machineId).sort()).toEqual([0, 1, 2, 3]);
      await expect(distributor.distribute(request(namespace, 2, 'late'))).rejects.toThrow(MachineIdOverflowError);
      expect(await target().heldBy(namespace, 'late')).toEqual([]);

      const revertedAt = Date.now();
      expect(await distributor.revert(state(namespace, 2, 'i2', held[2].machineId, revertedAt))).toBe(true);
      expect(await target().released(namespace)).toEqual([held[2].machineId]);
      const late = await distributor.distribute(request(namespace, 2, 'late'));
      expect(late).toEqual({ machineId: held[2].machineId, lastTimestamp: revertedAt });
      expect(await target().owner(namespace, late.machineId)).toBe('late');
    });

    it('reuses a released ID with its stored timestamp, resolving only once the clock is past it', async () => {
      const namespace = ns();
      const distributor = target().create();
      const a = await distributor.distribute(request(namespace, 4, 'a'));
      const ahead = Date.now() + 300; // the previous holder's clock ran ahead
      await distributor.revert(state(namespace, 4, 'a', a.machineId, ahead));
      // The next holder's clock: read for its request, then behind the stored timestamp, then past it.
      const clock = new ScriptedClock([ahead - 300, ahead - 1, ahead + 1]);
      const b = await target()
        .create({ clock: clock.now })
        .distribute(request(namespace, 4, 'b'));
      expect(b).toEqual({ machineId: a.machineId, lastTimestamp: ahead });
      expect(clock.reads).toBe(3); // it read the clock again after finding it behind, and resolved once past
    });

    it('gives the ID back and fails when a reused ID is too far ahead of the clock', async () => {
      const namespace = ns();
      const distributor = target().create({ maxClockWaitMs: 200 });
      const a = await distributor.distribute(request(namespace, 4, 'a'));
      await distributor.revert(state(namespace, 4, 'a', a.machineId, Date.now() + 60_000));
      await expect(distributor.distribute(request(namespace, 4, 'b'))).rejects.toThrow(ClockBackwardsError);
      expect(await target().released(namespace)).toEqual([a.machineId]);
      expect(await target().owner(namespace, a.machineId)).toBeNull();
    });

    it('reclaims a silent holder only past its deadline; its heartbeat then reports the loss, and its revert cannot release the new holder', async () => {
      // The store's clock decides when a deadline has passed, so real time must pass here: the
      // bounds below only say "not before", which a slow machine cannot break.
      const safeGuardMs = 600;
      const namespace = ns();
      const distributor = target().create({ safeGuardMs, guardIntervalMs: 100 });
      // The other ID's holder stays live on a lease far longer than this case.
      const live = await target()
        .create({ safeGuardMs: 60_000 })
        .distribute(request(namespace, 1, 'live'));
      const silent = await distributor.distribute(request(namespace, 1, 'silent'));
      // Taken before the guard is sent, so no later than the store's clock when the guard sets the
      // deadline; a time taken after the reply could be late by however long the reply took.
      const silentReport = Date.now();
      await distributor.guard(state(namespace, 1, 'silent', silent.machineId, silentReport));
      const deadline = await target().deadline(namespace, silent.machineId);
      expect(deadline).toBeGreaterThanOrEqual(silentReport + safeGuardMs - 20);
      // Asked from now on until it is handed out: refused while the holder's deadline had not passed.
      const { taken, at } = await distributeWhenFree(distributor, request(namespace, 1, 'newcomer'), 10_000);
      expect(at - silentReport).toBeGreaterThanOrEqual(safeGuardMs - 20);
      expect(taken!.machineId).toBe(silent.machineId); // never the live instance's
      expect(taken!.lastTimestamp).toBeGreaterThanOrEqual(silentReport + safeGuardMs);
      expect(await target().owner(namespace, live.machineId)).toBe('live');
      expect(await target().heldBy(namespace, 'silent')).toEqual([]);
      await expect(distributor.guard(state(namespace, 1, 'silent', silent.machineId))).rejects.toThrow(
        MachineIdLostError,
      );
      expect(await distributor.revert(state(namespace, 1, 'silent', silent.machineId))).toBe(false);
      expect(await target().owner(namespace, silent.machineId)).toBe('newcomer');
    });

    it('keeps giving an instance the ID it already holds', async () => {
      const namespace = ns();
      const distributor = target().create();
      const first = await distributor.distribute(request(namespace, 8, 'stable-pod-0'));
      await distributor.distribute(request(namespace, 8, 'other'));
      const again = await distributor.distribute(request(namespace, 8, 'stable-pod-0'));
      expect(again.machineId).toBe(first.machineId);
      expect(await target().heldBy(namespace, 'stable-pod-0')).toEqual([first.machineId]);
    });

    it('keeps namespaces apart and refuses a second machineBits in one namespace', async () => {
      const one = ns();
      const two = ns();
      const distributor = target().create();
      const a = await distributor.distribute(request(one, 3, 'x'));
      const b = await distributor.distribute(request(two, 3, 'y'));
      expect([a.machineId, b.machineId]).toEqual([0, 0]);
      await expect(distributor.distribute(request(one, 5, 'z'))).rejects.toThrow(/3 bits, not 5/);
    });

    it('rejects bad requests and options before touching the store', async () => {
      const namespace = ns();
      const distributor = target().create();
      await expect(distributor.distribute(request(namespace, 0, 'a'))).rejects.toThrow(IdGeneratorOptionsError);
      await expect(distributor.distribute(request(namespace, 40, 'a'))).rejects.toThrow(IdGeneratorOptionsError);
      await expect(distributor.distribute(request(namespace, 4, ''))).rejects.toThrow(IdGeneratorOptionsError);
      await expect(distributor.distribute(request('', 4, 'a'))).rejects.toThrow(IdGeneratorOptionsError);
      await expect(distributor.guard(state(namespace, 4, 'a', 0, 1.5))).rejects.toThrow(IdGeneratorOptionsError);
      expect(await target().heldBy(namespace, 'a')).toEqual([]);
      expect(() => target().create({ safeGuardMs: 1_000, guardIntervalMs: 500 })).toThrow(IdGeneratorOptionsError);
      expect(() => target().create({ safeGuardMs: 50 })).toThrow(IdGeneratorOptionsError);
    });
  });
}
