import { describe, expect, it } from '@jest/globals';
import { MachineIdLeaseExpiredError, MachineIdLostError, MachineIdReleasedError } from '../../errors.js';
import { CosIdGenerator } from '../../generators/cosid-generator.js';
import { MachineIdHolder, type HeldMachineId } from '../../machine/machine-id-holder.js';
import { heartbeatsOf, ManualClocks, quiet, type MachineIdContractContext } from './contract-context.js';

/**
 * How long a case waits for a holder to become usable: its lease clocks are the case's and stand
 * still, so only a heartbeat (or a replacement ID) ends the wait; this only turns a hang into a
 * failure.
 */
const USABLE_WITHIN_MS = 60_000;

/** Cases of describeMachineIdDistributorContract (see ../machine-id-distributor.contract.ts). */
export function describeHolderCases(context: MachineIdContractContext): void {
  const { target, ns, request, state, distributeWhenFree, faultIt } = context;
  // The holders' leases run on clocks the cases move (ManualClocks): a lease ends when a case
  // says, never because the machine was slow to send a heartbeat.
  describe('MachineIdHolder on the store', () => {
    it('heartbeats keep the lease past safeGuardMs; release stops generation, then reverts with the latest timestamp', async () => {
      const namespace = ns();
      const clocks = new ManualClocks();
      const distributor = target().create({ safeGuardMs: 1_000, guardIntervalMs: 50, clock: clocks.now });
      const heartbeats = heartbeatsOf(distributor, clocks);
      const holder = await MachineIdHolder.acquire({
        distributor,
        ...request(namespace, 4, 'a'),
        clock: clocks.now,
        monotonic: clocks.monotonic,
        logger: quiet,
      });
      const generator = new CosIdGenerator({
        machineId: holder.machineId,
        lastTimestamp: holder.lastTimestamp,
        lease: holder.lease,
        clock: clocks.now,
      });
      holder.track(generator);
      // The lease is 900 ms: 600 ms pass, a heartbeat sent after that gets through, 600 ms more.
      clocks.advance(600);
      await heartbeats.sentSince(clocks.monotonic());
      clocks.advance(600);
      expect(holder.lease.valid).toBe(true); // 1,200 ms after the acquire, carried by the heartbeat
      const last = generator.generate();
      expect(await holder.release()).toBe(true);
      clocks.advance(1); // a new millisecond: the generator checks its lease again
      expect(() => generator.generate()).toThrow(MachineIdReleasedError);
      expect(await target().owner(namespace, holder.machineId)).toBeNull();
      expect(await target().floor(namespace, holder.machineId)).toBeGreaterThanOrEqual(generator.parse(last).timestamp);
    });

    faultIt(
      'cut off from the store for longer than its lease: stops issuing (lease expired), and resumes when a heartbeat gets through',
      async () => {
        const namespace = ns();
        const store = await target().faulty('timeout');
        try {
          const clocks = new ManualClocks();
          const distributor = store.create({ safeGuardMs: 400, guardIntervalMs: 100, clock: clocks.now });
          const holder = await MachineIdHolder.acquire({
            distributor,
            ...request(namespace, 4, 'a'),
            clock: clocks.now,
            monotonic: clocks.monotonic,
            logger: quiet,
          });
          const generator = new CosIdGenerator({ machineId: holder.machineId, lease: holder.lease, clock: clocks.now });
          generator.generate();
          store.blackhole();
          clocks.advance(400); // past the 360 ms lease, and no heartbeat gets through
          expect(() => generator.generate()).toThrow(MachineIdLeaseExpiredError);
          store.heal();
          expect(await holder.whenUsable(USABLE_WITHIN_MS)).toBe(true);
          expect(() => generator.generate()).not.toThrow();
          expect(holder.machineId).toBe(generator.machineId); // nobody took it meanwhile
          expect(await holder.release()).toBe(true);
        } finally {
          await store.close();
        }
      },
    );

    faultIt(
      'a holder whose ID was taken while it was cut off acquires a new machine ID; the old one never issues again',
      async () => {
        const namespace = ns();
        const store = await target().faulty('timeout');
        const direct = target().create({ safeGuardMs: 60_000 });
        try {
          // The store lets the newcomer in once 100 ms of its own clock pass without a heartbeat.
          const clocks = new ManualClocks();
          const distributor = store.create({ safeGuardMs: 100, guardIntervalMs: 30, clock: clocks.now });
          const holder = await MachineIdHolder.acquire({
            distributor,
            ...request(namespace, 1, 'paused'),
            clock: clocks.now,
            monotonic: clocks.monotonic,
            logger: quiet,
          });
          const lost = holder.current;
          const other = await direct.distribute(request(namespace, 1, 'other'));
          const old = new CosIdGenerator({
            machineId: lost.machineId,
            lastTimestamp: lost.lastTimestamp,
            lease: lost.lease,
            clock: clocks.now,
          });
          holder.track(old);
          const beforePause = old.generate();
          const moved: HeldMachineId[] = [];
          holder.onMachineId((held) => void moved.push(held));

          store.blackhole(); // a pause longer than its lease: no heartbeat gets through
          clocks.advance(100);
          const { taken } = await distributeWhenFree(direct, request(namespace, 1, 'newcomer'), 10_000);
          expect(taken?.machineId).toBe(lost.machineId);
          expect(taken!.lastTimestamp).toBeGreaterThan(old.parse(beforePause).timestamp);
          // A free ID to move to, released at this holder's clock; which then moves on past it.
          await direct.revert(state(namespace, 1, 'other', other.machineId, clocks.now()));
          clocks.advance(1);
          store.heal();

          expect(await holder.whenUsable(USABLE_WITHIN_MS)).toBe(true);
          expect(moved.map((h) => h.machineId)).toEqual([other.machineId]);
          expect(holder.machineId).toBe(other.machineId);
          expect(lost.lease.endedBy).toBeInstanceOf(MachineIdLostError);
          expect(() => old.generate()).toThrow(MachineIdLostError);
          const replacement = new CosIdGenerator({
            machineId: holder.machineId,
            lastTimestamp: holder.lastTimestamp,
            lease: holder.lease,
            clock: clocks.now,
          });
          expect(replacement.generate() > beforePause).toBe(true);
          expect(await target().owner(namespace, lost.machineId)).toBe('newcomer');
          expect(await holder.release()).toBe(true);
          expect(await target().owner(namespace, other.machineId)).toBeNull();
        } finally {
          await store.close();
        }
      },
    );
  });
}
