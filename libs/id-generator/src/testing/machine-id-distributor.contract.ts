// The contract every store-backed MachineIdDistributor passes (Redis, Redis Cluster,
// PostgreSQL, and yours): the same cases, run against each through a small adapter. They cover
// the steps, holder-owned leases, the MachineIdHolder on the store, and faults between client and
// store (through a fault injector the adapter provides).
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ClockBackwardsError } from '../errors/clock-backwards.error.js';
import { IdGeneratorOptionsError } from '../errors/id-generator-options.error.js';
import { MachineIdLeaseExpiredError } from '../errors/machine-id-lease-expired.error.js';
import { MachineIdLostError } from '../errors/machine-id-lost.error.js';
import { MachineIdOverflowError } from '../errors/machine-id-overflow.error.js';
import { MachineIdReleasedError } from '../errors/machine-id-released.error.js';
import { CosIdGenerator } from '../generators/cosid-generator.js';
import type { LeasedMachineIdDistributorOptions } from '../machine/leased-machine-id-distributor.js';
import type { MachineIdDistributor, MachineIdRequest, MachineIdState } from '../machine/machine-id-distributor.js';
import { MachineIdHolder, type HeldMachineId } from '../machine/machine-id-holder.js';

/** A distributor with the lease settings every store-backed one has. */
export type LeasedDistributor = MachineIdDistributor & {
  readonly safeGuardMs: number;
  readonly guardIntervalMs: number;
};

export type Operation = 'distribute' | 'guard' | 'revert';
/**
 * `lost-then-resent`: the store acted, the reply was lost and the same request reached the store
 * again (ioredis resends after a reconnect; the proxy duplicates it for PostgreSQL).
 * `lost`: the store acted, the reply was lost and nothing was resent. `timeout`: the client gave
 * up while the store was acting.
 */
export type FaultKind = 'lost-then-resent' | 'lost' | 'timeout';

/** A client of the store through fault proxies (one per server), set up for one kind of fault. */
export interface FaultyStore {
  create(options?: LeasedMachineIdDistributorOptions): LeasedDistributor;
  /** Arms the fault on the next request of `operation` (the one that changes the store); resolves once applied. */
  inject(operation: Operation): Promise<void>;
  /** Nothing passes until `heal()` (a pause, a partition). */
  blackhole(): void;
  /** Ends the blackhole and resets every connection. */
  heal(): void;
  close(): Promise<void>;
}

/** What a store hands the contract. */
export interface DistributorContractTarget {
  create(options?: LeasedMachineIdDistributorOptions): LeasedDistributor;
  faulty(kind: FaultKind): Promise<FaultyStore>;
  /** Read-only views of the store's state, straight from the server. */
  owner(namespace: string, machineId: number): Promise<string | null>;
  heldBy(namespace: string, instanceId: string): Promise<number[]>;
  released(namespace: string): Promise<number[]>;
  /** The holder's deadline by the store's clock (epoch ms), null when not held. */
  deadline(namespace: string, machineId: number): Promise<number | null>;
  /** The timestamp the next holder of the ID starts after. */
  floor(namespace: string, machineId: number): Promise<number>;
  cleanup(namespace: string): Promise<void>;
  close(): Promise<void>;
}

export interface MachineIdDistributorContractOptions {
  /** Run the cases that need `faulty` (default true); false for a store without a fault injector. */
  faults?: boolean;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const quiet = { log: () => undefined, warn: () => undefined, error: () => undefined };

/**
 * Defines the cases for one store. `setup` runs once (beforeAll), `close` once (afterAll); every
 * case works in a namespace of its own (cleaned up afterwards), so the suite can share a server.
 *
 * ```ts
 * describeMachineIdDistributorContract('my store', async () => myStoreTarget(), { faults: false });
 * ```
 */
export function describeMachineIdDistributorContract(
  label: string,
  setup: () => Promise<DistributorContractTarget>,
  options: MachineIdDistributorContractOptions = {},
): void {
  const withFaults = options.faults ?? true;
  const faultIt = withFaults ? it : it.skip;
  const faultDescribe = withFaults ? describe : describe.skip;
  describe(`MachineIdDistributor contract: ${label}`, () => {
    let target: DistributorContractTarget;
    const namespaces: string[] = [];
    const run = randomUUID().slice(0, 8);
    let sequence = 0;

    beforeAll(async () => {
      target = await setup();
    });

    afterAll(async () => {
      for (const ns of namespaces) await target.cleanup(ns);
      await target.close();
    });

    /** A fresh namespace, with characters that must not break key syntax or SQL. */
    function ns(): string {
      const namespace = `mdc_${run}_${++sequence}:{tag}%é'"`;
      namespaces.push(namespace);
      return namespace;
    }

    const request = (namespace: string, machineBits: number, instanceId: string): MachineIdRequest => ({
      namespace,
      machineBits,
      instanceId,
    });
    const state = (
      namespace: string,
      machineBits: number,
      instanceId: string,
      machineId: number,
      lastTimestamp = Date.now(),
    ): MachineIdState => ({
      namespace,
      machineBits,
      instanceId,
      machineId,
      lastTimestamp,
    });

    /** Distributes until an ID is free (MachineIdOverflowError meanwhile); returns it and the refusals. */
    async function distributeWhenFree(distributor: MachineIdDistributor, req: MachineIdRequest, limitMs: number) {
      const started = Date.now();
      let refusals = 0;
      for (;;) {
        try {
          return { taken: await distributor.distribute(req), refusals, at: Date.now() };
        } catch (error) {
          if (!(error instanceof MachineIdOverflowError)) throw error;
          refusals++;
          if (Date.now() - started > limitMs) return { taken: undefined, refusals, at: Date.now() };
          await sleep(25);
        }
      }
    }

    describe('the three steps', () => {
      it('hands distinct IDs to concurrent instances', async () => {
        const namespace = ns();
        const distributor = target.create();
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
        const distributor = target.create();
        const held = await Promise.all([0, 1, 2, 3].map((i) => distributor.distribute(request(namespace, 2, `i${i}`))));
        expect(held.map((h) => h.machineId).sort()).toEqual([0, 1, 2, 3]);
        await expect(distributor.distribute(request(namespace, 2, 'late'))).rejects.toThrow(MachineIdOverflowError);
        expect(await target.heldBy(namespace, 'late')).toEqual([]);

        const revertedAt = Date.now();
        expect(await distributor.revert(state(namespace, 2, 'i2', held[2].machineId, revertedAt))).toBe(true);
        expect(await target.released(namespace)).toEqual([held[2].machineId]);
        const late = await distributor.distribute(request(namespace, 2, 'late'));
        expect(late).toEqual({ machineId: held[2].machineId, lastTimestamp: revertedAt });
        expect(await target.owner(namespace, late.machineId)).toBe('late');
      });

      it('reuses a released ID with its stored timestamp, resolving only once the clock is past it', async () => {
        const namespace = ns();
        const distributor = target.create();
        const a = await distributor.distribute(request(namespace, 4, 'a'));
        const ahead = Date.now() + 300; // the previous holder's clock ran ahead
        await distributor.revert(state(namespace, 4, 'a', a.machineId, ahead));
        const b = await distributor.distribute(request(namespace, 4, 'b'));
        expect(b).toEqual({ machineId: a.machineId, lastTimestamp: ahead });
        expect(Date.now()).toBeGreaterThan(ahead);
      });

      it('gives the ID back and fails when a reused ID is too far ahead of the clock', async () => {
        const namespace = ns();
        const distributor = target.create({ maxClockWaitMs: 200 });
        const a = await distributor.distribute(request(namespace, 4, 'a'));
        await distributor.revert(state(namespace, 4, 'a', a.machineId, Date.now() + 60_000));
        await expect(distributor.distribute(request(namespace, 4, 'b'))).rejects.toThrow(ClockBackwardsError);
        expect(await target.released(namespace)).toEqual([a.machineId]);
        expect(await target.owner(namespace, a.machineId)).toBeNull();
      });

      it('reclaims a silent holder only past its deadline; its heartbeat then reports the loss, and its revert cannot release the new holder', async () => {
        const safeGuardMs = 600;
        const namespace = ns();
        const distributor = target.create({ safeGuardMs, guardIntervalMs: 100 });
        const live = await distributor.distribute(request(namespace, 1, 'live'));
        const silent = await distributor.distribute(request(namespace, 1, 'silent'));
        const silentReport = Date.now();
        await distributor.guard(state(namespace, 1, 'silent', silent.machineId, silentReport));
        const silentSince = Date.now();
        let beating = true;
        const beats = (async () => {
          while (beating) {
            await distributor.guard(state(namespace, 1, 'live', live.machineId));
            await sleep(100);
          }
        })();
        try {
          const { taken, refusals, at } = await distributeWhenFree(
            distributor,
            request(namespace, 1, 'newcomer'),
            5_000,
          );
          expect(refusals).toBeGreaterThan(3); // refused while the holder's deadline had not passed
          expect(at - silentSince).toBeGreaterThanOrEqual(safeGuardMs - 20);
          expect(taken!.machineId).toBe(silent.machineId); // never the live instance's
          expect(taken!.lastTimestamp).toBeGreaterThanOrEqual(silentReport + safeGuardMs);
          expect(await target.owner(namespace, live.machineId)).toBe('live');
          expect(await target.heldBy(namespace, 'silent')).toEqual([]);
          await expect(distributor.guard(state(namespace, 1, 'silent', silent.machineId))).rejects.toThrow(
            MachineIdLostError,
          );
          expect(await distributor.revert(state(namespace, 1, 'silent', silent.machineId))).toBe(false);
          expect(await target.owner(namespace, silent.machineId)).toBe('newcomer');
        } finally {
          beating = false;
          await beats;
        }
      });

      it('keeps giving an instance the ID it already holds', async () => {
        const namespace = ns();
        const distributor = target.create();
        const first = await distributor.distribute(request(namespace, 8, 'stable-pod-0'));
        await distributor.distribute(request(namespace, 8, 'other'));
        const again = await distributor.distribute(request(namespace, 8, 'stable-pod-0'));
        expect(again.machineId).toBe(first.machineId);
        expect(await target.heldBy(namespace, 'stable-pod-0')).toEqual([first.machineId]);
      });

      it('keeps namespaces apart and refuses a second machineBits in one namespace', async () => {
        const one = ns();
        const two = ns();
        const distributor = target.create();
        const a = await distributor.distribute(request(one, 3, 'x'));
        const b = await distributor.distribute(request(two, 3, 'y'));
        expect([a.machineId, b.machineId]).toEqual([0, 0]);
        await expect(distributor.distribute(request(one, 5, 'z'))).rejects.toThrow(/3 bits, not 5/);
      });

      it('rejects bad requests and options before touching the store', async () => {
        const namespace = ns();
        const distributor = target.create();
        await expect(distributor.distribute(request(namespace, 0, 'a'))).rejects.toThrow(IdGeneratorOptionsError);
        await expect(distributor.distribute(request(namespace, 40, 'a'))).rejects.toThrow(IdGeneratorOptionsError);
        await expect(distributor.distribute(request(namespace, 4, ''))).rejects.toThrow(IdGeneratorOptionsError);
        await expect(distributor.distribute(request('', 4, 'a'))).rejects.toThrow(IdGeneratorOptionsError);
        await expect(distributor.guard(state(namespace, 4, 'a', 0, 1.5))).rejects.toThrow(IdGeneratorOptionsError);
        expect(await target.heldBy(namespace, 'a')).toEqual([]);
        expect(() => target.create({ safeGuardMs: 1_000, guardIntervalMs: 500 })).toThrow(IdGeneratorOptionsError);
        expect(() => target.create({ safeGuardMs: 50 })).toThrow(IdGeneratorOptionsError);
      });
    });

    describe('holder-owned leases', () => {
      it("a newcomer with safeGuardMs 300 never takes a live holder's ID whose lease is 60 s: refused, and no ID issued twice", async () => {
        const namespace = ns();
        const long = target.create({ safeGuardMs: 60_000 });
        const short = target.create({ safeGuardMs: 300, guardIntervalMs: 100 });
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
          expect(await target.owner(namespace, holder.machineId)).toBe('holder-60s');
        } finally {
          await holder.release();
        }
      });

      it("a newcomer with safeGuardMs 60 s reclaims a silent holder's ID once the holder's own 300 ms lease has passed", async () => {
        const namespace = ns();
        const short = target.create({ safeGuardMs: 300, guardIntervalMs: 100 });
        const long = target.create({ safeGuardMs: 60_000 });
        await long.distribute(request(namespace, 1, 'busy'));
        const silent = await short.distribute(request(namespace, 1, 'silent-300ms'));
        const { taken } = await distributeWhenFree(long, request(namespace, 1, 'newcomer-60s'), 3_000); // far below 60 s
        expect(taken?.machineId).toBe(silent.machineId);
        expect(await target.owner(namespace, silent.machineId)).toBe('newcomer-60s');
        const deadline = await target.deadline(namespace, silent.machineId);
        expect(deadline! - Date.now()).toBeGreaterThan(50_000); // the newcomer's own 60 s deadline now
      });

      it("a reclaimed ID starts after everything its silent holder could issue by the holder's own clock (that clock 400 ms ahead)", async () => {
        const namespace = ns();
        const skew = 400;
        const aheadClock = () => Date.now() + skew;
        const ahead = target.create({ safeGuardMs: 500, guardIntervalMs: 100, clock: aheadClock });
        const newcomer = target.create({ safeGuardMs: 500, guardIntervalMs: 100, maxClockWaitMs: 3_000 });
        await target.create({ safeGuardMs: 60_000 }).distribute(request(namespace, 1, 'busy'));
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

    describe('MachineIdHolder on the store', () => {
      it('heartbeats keep the lease past safeGuardMs; release stops generation, then reverts with the latest timestamp', async () => {
        const namespace = ns();
        const distributor = target.create({ safeGuardMs: 300, guardIntervalMs: 50 });
        const holder = await MachineIdHolder.acquire({ distributor, ...request(namespace, 4, 'a'), logger: quiet });
        const generator = new CosIdGenerator({
          machineId: holder.machineId,
          lastTimestamp: holder.lastTimestamp,
          lease: holder.lease,
        });
        holder.track(generator);
        await sleep(600);
        expect(holder.lease.valid).toBe(true);
        const last = generator.generate();
        expect(await holder.release()).toBe(true);
        await sleep(2);
        expect(() => generator.generate()).toThrow(MachineIdReleasedError);
        expect(await target.owner(namespace, holder.machineId)).toBeNull();
        expect(await target.floor(namespace, holder.machineId)).toBeGreaterThanOrEqual(generator.parse(last).timestamp);
      });

      faultIt(
        'cut off from the store for longer than its lease: stops issuing (lease expired), and resumes when a heartbeat gets through',
        async () => {
          const namespace = ns();
          const store = await target.faulty('timeout');
          try {
            const distributor = store.create({ safeGuardMs: 400, guardIntervalMs: 100 });
            const holder = await MachineIdHolder.acquire({ distributor, ...request(namespace, 4, 'a'), logger: quiet });
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
          const store = await target.faulty('timeout');
          const direct = target.create({ safeGuardMs: 60_000 });
          try {
            const distributor = store.create({ safeGuardMs: 300, guardIntervalMs: 100 });
            const holder = await MachineIdHolder.acquire({
              distributor,
              ...request(namespace, 1, 'paused'),
              logger: quiet,
            });
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
            const { taken } = await distributeWhenFree(direct, request(namespace, 1, 'newcomer'), 3_000);
            expect(taken?.machineId).toBe(lost.machineId);
            expect(taken!.lastTimestamp).toBeGreaterThan(old.parse(beforePause).timestamp);
            await direct.revert(state(namespace, 1, 'other', other.machineId)); // a free ID to move to
            store.heal();

            expect(await holder.whenUsable(5_000)).toBe(true);
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
            expect(await target.owner(namespace, lost.machineId)).toBe('newcomer');
            expect(await holder.release()).toBe(true);
            expect(await target.owner(namespace, other.machineId)).toBeNull();
          } finally {
            await store.close();
          }
        },
      );
    });

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
            await applied(fired);
            const held = await target.heldBy(namespace, 'faulted');
            // A resent request must get the answer; otherwise an error is right too (a client that
            // retries on its own, as ioredis's Cluster does on a closed connection, may answer).
            if (kind === 'lost-then-resent') expect(outcome.error).toBeUndefined();
            if (outcome.error === undefined) expect(held).toEqual([outcome.value!.machineId]);
            else expect(held.length).toBeLessThanOrEqual(1);
            const again = await target.create().distribute(request(namespace, 3, 'faulted'));
            expect(await target.heldBy(namespace, 'faulted')).toEqual([again.machineId]);
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
          const ahead = target.create({ safeGuardMs: 300, guardIntervalMs: 100, clock: () => Date.now() + skew });
          await target.create({ safeGuardMs: 60_000 }).distribute(request(namespace, 1, 'busy'));
          const boundAtLeast = Date.now() + skew + 300; // its clock, read before the request, + its safeGuardMs
          const silent = await ahead.distribute(request(namespace, 1, 'silent'));
          await sleep(350);
          const distributor = store.create({ safeGuardMs: 300, guardIntervalMs: 100, maxClockWaitMs: 2_000 });
          await distributor.revert(state(namespace, 1, 'nobody', 0)); // connected
          const fired = store.inject('distribute');
          const taken = await distributor.distribute(request(namespace, 1, 'newcomer'));
          await applied(fired);
          expect(taken.machineId).toBe(silent.machineId);
          expect(taken.lastTimestamp).toBeGreaterThanOrEqual(boundAtLeast);
          expect(await target.heldBy(namespace, 'newcomer')).toEqual([silent.machineId]);
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
            const before = (await target.deadline(namespace, held.machineId))!;
            await sleep(20);
            const fired = store.inject('guard');
            const outcome = await settle(distributor.guard(state(namespace, 3, 'a', held.machineId)));
            await applied(fired);
            expect(outcome.error).not.toBeInstanceOf(MachineIdLostError);
            if (kind === 'lost-then-resent') expect(outcome.error).toBeUndefined();
            // The store acted in every case: the deadline moved on, the ID is still the holder's.
            expect((await target.deadline(namespace, held.machineId))!).toBeGreaterThan(before);
            expect(await target.owner(namespace, held.machineId)).toBe('a');
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
            await applied(fired);
            // Never a false "not held": true, or (not resent) an error.
            if (kind === 'lost-then-resent' || outcome.error === undefined) expect(outcome).toEqual({ value: true });
            expect(await target.owner(namespace, held.machineId)).toBeNull();
            expect(await target.released(namespace)).toEqual([held.machineId]);
          } finally {
            await store.close();
          }
        },
      );

      async function faultyStore(kind: FaultKind): Promise<FaultyStore> {
        return target.faulty(kind);
      }
    });
  });
}

/** A fault that never fires would leave the case waiting: fail it saying so. */
function applied(fired: Promise<void>): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const missed = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error('the fault was never applied: no request matched it')), 5_000);
  });
  return Promise.race([fired, missed]).finally(() => clearTimeout(timer));
}

async function settle<T>(promise: Promise<T>): Promise<{ value?: T; error?: unknown }> {
  try {
    return { value: await promise };
  } catch (error) {
    return { error };
  }
}
