import { describe, expect, it } from '@jest/globals';
import { MachineIdOverflowError } from '../../errors/machine-id-overflow.error.js';
import { CosIdGenerator } from '../../generators/cosid-generator.js';
import { MachineIdHolder } from '../../machine/machine-id-holder.js';
import { sleep, quiet, type MachineIdContractContext } from './contract-context.js';

/** Cases of describeMachineIdDistributorContract (see ../machine-id-distributor.contract.ts). */
export function describeLeaseCases(context: MachineIdContractContext): void {
  const { target, ns, request, state, distributeWhenFree } = context;
  describe('holder-owned leases', () => {
    it("a newcomer with safeGuardMs 300 never takes a live holder's ID whose lease is 60 s: refused, and no ID issued twice", async () => {
      const namespace = ns();
      const long = target().create({ safeGuardMs: 60_000 });
      const short = target().create({ safeGuardMs: 300, guardIntervalMs: 100 });
      const holder = await MachineIdHolder.acquire({
        distributor: long,
        ...request(namespace, 1, 'holder-60s'),
        logger: quiet,
      });
      await long.distribute(request(namespace, 1, 'other-60s')); // every ID is held
      const held = new CosIdGenerator({
        machineId: holder.machineId,
        lastTimestamp: holder.lastTimestamp,
        lease: holder.lease,
      });
      holder.track(held);
      const seen = new Set<string>();
      let duplicates = 0;
      let issued = 0;
      const add = (id: string) => {
        issued++;
        if (seen.has(id)) duplicates++;
        else seen.add(id);
      };
      let newcomer: CosIdGenerator | undefined;
      let refusals = 0;
      try {
        // Both issue IDs side by side for well past the newcomer's 300 ms; the holder's
        // heartbeat (every 5 s) is silent all along.
        const until = Date.now() + 1_200;
        while (Date.now() < until) {
          for (let i = 0; i < 200; i++) add(held.generate());
          if (newcomer) {
            for (let i = 0; i < 200; i++) add(newcomer.generate());
          } else {
            try {
              const taken = await short.distribute(request(namespace, 1, 'newcomer-300ms'));
              newcomer = new CosIdGenerator({ machineId: taken.machineId, lastTimestamp: taken.lastTimestamp });
            } catch (error) {
              if (!(error instanceof MachineIdOverflowError)) throw error;
              refusals++;
            }
          }
          await sleep(20);
        }
        expect({ newcomerGotAnId: newcomer !== undefined, duplicates }).toEqual({
          newcomerGotAnId: false,
          duplicates: 0,
        });
        expect(refusals).toBeGreaterThan(10);
        expect(issued).toBe(seen.size);
        expect(await target().owner(namespace, holder.machineId)).toBe('holder-60s');
      } finally {
        await holder.release();
      }
    });

    it("a newcomer with safeGuardMs 60 s reclaims a silent holder's ID once the holder's own 300 ms lease has passed", async () => {
      const namespace = ns();
      const short = target().create({ safeGuardMs: 300, guardIntervalMs: 100 });
      const long = target().create({ safeGuardMs: 60_000 });
      await long.distribute(request(namespace, 1, 'busy'));
      const silent = await short.distribute(request(namespace, 1, 'silent-300ms'));
      const { taken } = await distributeWhenFree(long, request(namespace, 1, 'newcomer-60s'), 3_000); // far below 60 s
      expect(taken?.machineId).toBe(silent.machineId);
      expect(await target().owner(namespace, silent.machineId)).toBe('newcomer-60s');
      const deadline = await target().deadline(namespace, silent.machineId);
      expect(deadline! - Date.now()).toBeGreaterThan(50_000); // the newcomer's own 60 s deadline now
    });

    it("a reclaimed ID starts after everything its silent holder could issue by the holder's own clock (that clock 400 ms ahead)", async () => {
      const namespace = ns();
      const skew = 400;
      const aheadClock = () => Date.now() + skew;
      const ahead = target().create({ safeGuardMs: 500, guardIntervalMs: 100, clock: aheadClock });
      const newcomer = target().create({ safeGuardMs: 500, guardIntervalMs: 100, maxClockWaitMs: 3_000 });
      await target()
        .create({ safeGuardMs: 60_000 })
        .distribute(request(namespace, 1, 'busy'));
      const silent = await ahead.distribute(request(namespace, 1, 'ahead'));
      const guardedAt = aheadClock();
      await ahead.guard(state(namespace, 1, 'ahead', silent.machineId, guardedAt));
      // The holder may issue IDs until its lease ends: before guardedAt + 500 by ITS clock.
      const { taken } = await distributeWhenFree(newcomer, request(namespace, 1, 'newcomer'), 3_000);
      expect(taken?.machineId).toBe(silent.machineId);
      expect(taken!.lastTimestamp).toBeGreaterThanOrEqual(guardedAt + 500);
      expect(Date.now()).toBeGreaterThan(taken!.lastTimestamp); // resolved once the newcomer's clock passed it
    });
  });
}
