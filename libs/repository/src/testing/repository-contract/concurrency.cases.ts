import { describe, expect, it } from '@jest/globals';
import { OptimisticLockError } from '../../errors/optimistic-lock.error.js';
import { retryOnConflict } from '../../repository/retry-on-conflict.js';
import type { RepositoryContractContext } from './contract-context.js';

/** Cases of describeRepositoryContract (see ../repository.contract.ts). */
export function describeConcurrencyCases(context: RepositoryContractContext): void {
  const { fixture, stored } = context;
  describe('concurrency on one aggregate (32 writers × 50 increments)', () => {
    const WRITERS = 32;
    const INCREMENTS = 50;

    it('with retryOnConflict nothing is lost: count 1,600 at version 1,601', async () => {
      const f = fixture();
      await stored(f, 'hot', 'hot');
      let conflicts = 0;
      await Promise.all(
        Array.from({ length: WRITERS }, async () => {
          for (let i = 0; i < INCREMENTS; i++) {
            await retryOnConflict(
              async () => {
                const counter = (await f.repository.findById('hot'))!;
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
      await Promise.all(
        Array.from({ length: WRITERS }, async () => {
          for (let i = 0; i < INCREMENTS; i++) {
            try {
              const counter = (await f.repository.findById('hot2'))!;
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
