import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from '@jest/globals';
import { MachineIdOverflowError } from '../../errors.js';
import { CosIdGenerator } from '../../generators/cosid-generator.js';
import { MachineIdHolder } from '../../machine/machine-id-holder.js';
import { quiet, ScriptedClock, type MachineIdContractContext } from './contract-context.js';

/** Cases of describeMachineIdDistributorContract (see ../machine-id-distributor.contract.ts). */
export function describeLeaseCases(context: MachineIdContractContext): void {
  const { target, ns, request, state, distributeWhenFree } = context;
  // Whether a deadline has passed is the store's clock's call: these cases let real time pass,
  // and each bound below holds however late the machine runs.
  describe('holder-owned leases', () => {
    it("a newcomer with safeGuardMs 100 never takes a live holder's ID whose lease is 60 s: refused, and no ID issued twice", async () => {
      const namespace = ns();
      const newcomerGuardMs = 100;
      const long = target().create({ safeGuardMs: 60_000 });
      const short = target().create({ safeGuardMs: newcomerGuardMs, guardIntervalMs: 30 });
      const holder = await MachineIdHolder.acquire({
        distributor: long,
        ...request(namespace, 1, 'holder-60s'),
        logger: quiet,
      });
      await long.distribute(request(namespace, 1, 'other-60s')); // every ID is held
      // Both deadlines were written before this: from here on, the store's clock counts at least
      // as much as this one.
      const lastWrite = Date.now();
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
      let lateRefusals = 0;
      // Attempts sent this long after the holder's last write fall well past the newcomer's own
      // safeGuardMs: a store judging the holder by the newcomer's setting would hand the ID out.
      const late = lastWrite + 3 * newcomerGuardMs;
      try {
        // Both issue IDs side by side; the holder's heartbeat (every 5 s) is silent all along.
        while (Date.now() < late || (newcomer === undefined && lateRefusals === 0)) {
          for (let i = 0; i < 200; i++) add(held.generate());
          if (newcomer) {
            for (let i = 0; i < 200; i++) add(newcomer.generate());
          } else {
            const sentAt = Date.now();
            try {
              const taken = await short.distribute(request(namespace, 1, 'newcomer-100ms'));
              newcomer = new CosIdGenerator({ machineId: taken.machineId, lastTimestamp: taken.lastTimestamp });
            } catch (error) {
              if (!(error instanceof MachineIdOverflowError)) throw error;
              if (sentAt >= late) lateRefusals++;
            }
          }
          await sleep(20);
        }
        expect({ newcomerGotAnId: newcomer !== undefined, duplicates }).toEqual({
          newcomerGotAnId: false,
          duplicates: 0,
        });
        expect(lateRefusals).toBeGreaterThan(0);
        expect(issued).toBe(seen.size);
        expect(await target().owner(namespace, holder.machineId)).toBe('holder-60s');
      } finally {
        await holder.release();
      }
    });

    it("a newcomer with safeGuardMs 60 s reclaims a silent holder's ID once the holder's own 100 ms lease has passed", async () => {
      const namespace = ns();
      const short = target().create({ safeGuardMs: 100, guardIntervalMs: 30 });
      const long = target().create({ safeGuardMs: 60_000 });
      await long.distribute(request(namespace, 1, 'busy'));
      const silent = await short.distribute(request(namespace, 1, 'silent-100ms'));
      // The limit is far below the newcomer's 60 s: only the holder's own lease can have let it in.
      const { taken } = await distributeWhenFree(long, request(namespace, 1, 'newcomer-60s'), 10_000);
      expect(taken?.machineId).toBe(silent.machineId);
      expect(await target().owner(namespace, silent.machineId)).toBe('newcomer-60s');
      const deadline = await target().deadline(namespace, silent.machineId);
      expect(deadline! - Date.now()).toBeGreaterThan(50_000); // the newcomer's own 60 s deadline now
    });

    it("a reclaimed ID starts after everything its silent holder could issue by the holder's own clock (that clock 400 ms ahead)", async () => {
      const namespace = ns();
      const skew = 400;
      const safeGuardMs = 100;
      const start = Date.now();
      const ahead = target().create({ safeGuardMs, guardIntervalMs: 30, clock: () => start + skew });
      await target()
        .create({ safeGuardMs: 60_000 })
        .distribute(request(namespace, 1, 'busy'));
      const silent = await ahead.distribute(request(namespace, 1, 'ahead'));
      const guardedAt = start + skew;
      await ahead.guard(state(namespace, 1, 'ahead', silent.machineId, guardedAt));
      // The holder may issue IDs until its lease ends: before guardedAt + safeGuardMs by ITS clock.
      // Past its deadline by the store's clock (however long the wait runs, nobody else asks).
      await sleep(safeGuardMs + 50);
      // The newcomer's clock: far behind that bound for its request (so the floor cannot come from
      // it), then still behind the floor, then past it.
      const clock = new ScriptedClock([start, guardedAt + safeGuardMs - 1, guardedAt + safeGuardMs + 1_000]);
      const newcomer = target().create({ safeGuardMs, guardIntervalMs: 30, clock: clock.now });
      const taken = await newcomer.distribute(request(namespace, 1, 'newcomer'));
      expect(taken.machineId).toBe(silent.machineId);
      expect(taken.lastTimestamp).toBeGreaterThanOrEqual(guardedAt + safeGuardMs);
      expect(clock.reads).toBe(3); // resolved once the newcomer's clock passed it, not before
    });
  });
}
