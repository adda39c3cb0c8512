import { describe, expect, it } from '@jest/globals';
import { OptimisticLockError } from '../../errors.js';
import { retryOnConflict } from '../../repository/retry-on-conflict.js';
import type { RepositoryContractContext } from './contract-context.js';

/**
 * Resolves for every caller once `parties` have called it: the writers' first reads all happen
 * before any of their writes, so the first round is contended whatever the machine's speed.
 */
function barrier(parties: number): () => Promise<void> {
  let arrived = 0;
  let open!: () => void;
  const all = new Promise<void>((resolve) => (open = resolve));
  return () => {
    if (++arrived === parties) open();
    return all;
  };
}

/** Cases of describeRepositoryContract (see ../repository.contract.ts). */
export function describeConcurrencyCases(context: RepositoryContractContext): void {
  const { fixture, stored } = context;
  // Every writer's first write races all the others from one version (a barrier), and each later
  // round races whoever is left: a store whose version check is not atomic with its write lets
  // several win one round. That needs rounds contended, not many of them.
  describe('concurrency on one aggregate (8 writers × 25 increments)', () => {
    const WRITERS = 8;
    const INCREMENTS = 25;

    it('with retryOnConflict nothing is lost: count 200 at version 201', async () => {
      const f = fixture();
      await stored(f, 'hot', 'hot');
      let conflicts = 0;
      const allRead = barrier(WRITERS);
      await Promise.all(
        Array.from({ length: WRITERS }, async () => {
          for (let i = 0; i < INCREMENTS; i++) {
            await retryOnConflict(
              async (attempt) => {
                const counter = (await f.repository.findById('hot'))!;
                if (i === 0 && attempt === 1) await allRead();
                counter.increment();
                await f.repository.update(counter);
              },
              { attempts: 1_000, onConflict: () => void conflicts++ },
            );
          }
        }),
      );
      const final = (await f.repository.findById('hot'))!;
      expect(final.count).toBe(WRITERS * INCREMENTS);
      expect(final.oldVersion).toBe(WRITERS * INCREMENTS + 1);
      expect(conflicts).toBeGreaterThan(0);
      // One UPSERT per successful write, every version exactly once.
      expect(f.published.map((e) => e.version).sort((x, y) => x - y)).toEqual(
        Array.from({ length: WRITERS * INCREMENTS }, (_, i) => i + 2),
      );
    });

    it('without retry every lost race is an OptimisticLockError and no write is silently dropped', async () => {
      const f = fixture();
      await stored(f, 'hot2', 'hot2');
      let successes = 0;
      let conflicts = 0;
      const other: unknown[] = [];
      const allRead = barrier(WRITERS);
      await Promise.all(
        Array.from({ length: WRITERS }, async () => {
          for (let i = 0; i < INCREMENTS; i++) {
            try {
              const counter = (await f.repository.findById('hot2'))!;
              if (i === 0) await allRead();
              counter.increment();
              await f.repository.update(counter);
              successes++;
            } catch (error) {
              if (error instanceof OptimisticLockError) conflicts++;
              else other.push(error);
            }
          }
        }),
      );
      expect(other).toEqual([]);
      expect(successes + conflicts).toBe(WRITERS * INCREMENTS);
      expect(conflicts).toBeGreaterThan(0);
      const final = (await f.repository.findById('hot2'))!;
      expect(final.count).toBe(successes);
      expect(final.oldVersion).toBe(successes + 1);
      expect(f.published).toHaveLength(successes);
    });
  });
}
