import { describe, expect, it } from '@jest/globals';
import { MachineIdLeaseExpiredError } from '../../errors/machine-id-lease-expired.error.js';
import { MachineIdLostError } from '../../errors/machine-id-lost.error.js';
import { MachineIdReleasedError } from '../../errors/machine-id-released.error.js';
import { CosIdGenerator } from '../../generators/cosid-generator.js';
import { MachineIdHolder, type HeldMachineId } from '../../machine/machine-id-holder.js';
import { sleep, quiet, setUp, type MachineIdContractContext } from './contract-context.js';

/** Cases of describeMachineIdDistributorContract (see ../machine-id-distributor.contract.ts). */
export function describeHolderCases(context: MachineIdContractContext): void {
  const { target, ns, request, state, distributeWhenFree, faultIt } = context;
  describe('MachineIdHolder on the store', () => {
    it('heartbeats keep the lease past safeGuardMs; release stops generation, then reverts with the latest timestamp', async () => {
      const namespace = ns();
      // A lease short enough that only heartbeats can carry it through the sleep below, and
      // long enough that a loaded machine's late heartbeat (hundreds of ms) does not end it.
      const distributor = target().create({ safeGuardMs: 1_000, guardIntervalMs: 50 });
      const holder = await setUp(() =>
        MachineIdHolder.acquire({ distributor, ...request(namespace, 4, 'a'), logger: quiet }),
      );
      const generator = new CosIdGenerator({
        machineId: holder.machineId,
        lastTimestamp: holder.lastTimestamp,
        lease: holder.lease,
      });
      holder.track(generator);
      await sleep(1_500);
      expect(holder.lease.valid).toBe(true);
      const last = generator.generate();
      expect(await holder.release()).toBe(true);
      await sleep(2);
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
          const distributor = store.create({ safeGuardMs: 400, guardIntervalMs: 100 });
          const holder = await setUp(() =>
            MachineIdHolder.acquire({ distributor, ...request(namespace, 4, 'a'), logger: quiet }),
          );
          const generator = new CosIdGenerator({ machineId: holder.machineId, lease: holder.lease });
          generator.generate();
          store.blackhole();
          await sleep(450);
          await Promise.resolve();
          expect(() => generator.generate()).toThrow(MachineIdLeaseExpiredError);
          store.heal();
          expect(await holder.whenUsable(3_000)).toBe(true);
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
          // A lease long enough that heartbeats delayed on a loaded machine do not end it before
          // the pause; the pause itself outlasts it many times over.
          const distributor = store.create({ safeGuardMs: 1_000, guardIntervalMs: 100 });
          const holder = await setUp(() =>
            MachineIdHolder.acquire({ distributor, ...request(namespace, 1, 'paused'), logger: quiet }),
          );
          const lost = holder.current;
          const other = await direct.distribute(request(namespace, 1, 'other'));
          const old = new CosIdGenerator({
            machineId: lost.machineId,
            lastTimestamp: lost.lastTimestamp,
            lease: lost.lease,
          });
          holder.track(old);
          const beforePause = old.generate();
          const moved: HeldMachineId[] = [];
          holder.onMachineId((held) => void moved.push(held));

          store.blackhole(); // a pause: no heartbeat gets through
          const { taken } = await distributeWhenFree(direct, request(namespace, 1, 'newcomer'), 10_000);
          expect(taken?.machineId).toBe(lost.machineId);
          expect(taken!.lastTimestamp).toBeGreaterThan(old.parse(beforePause).timestamp);
          await direct.revert(state(namespace, 1, 'other', other.machineId)); // a free ID to move to
          store.heal();

          expect(await holder.whenUsable(10_000)).toBe(true);
          expect(moved.map((h) => h.machineId)).toEqual([other.machineId]);
          expect(holder.machineId).toBe(other.machineId);
          expect(lost.lease.endedBy).toBeInstanceOf(MachineIdLostError);
          expect(() => old.generate()).toThrow(MachineIdLostError);
          const replacement = new CosIdGenerator({
            machineId: holder.machineId,
            lastTimestamp: holder.lastTimestamp,
            lease: holder.lease,
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
