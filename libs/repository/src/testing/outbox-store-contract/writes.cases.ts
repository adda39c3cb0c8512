import { expect, it } from '@jest/globals';
import { OptimisticLockError } from '../../errors.js';
import { Counter } from '../counter.aggregate.js';
import { LEASE, UUID, type OutboxStoreContractContext } from './contract-context.js';

/**
 * Writes store their events with them, and nothing for a write that failed.
 * (Cases of describeOutboxStoreContract, see ../outbox-store.contract.ts.)
 */
export function describeWriteCases(context: OutboxStoreContractContext): void {
  const { writeVersions, claim } = context;
  it("stores every event of a write with it, and a claim hands over an instance's pending events in version order", async () => {
    const before = Date.now();
    await writeVersions('a', 3);
    const after = Date.now();
    const claims = await claim('relay-1', after);
    expect(claims).toHaveLength(1);
    const [c] = claims;
    expect(c).toMatchObject({ aggregate: 'Counter', aggregateId: 'a', owner: 'relay-1', leaseUntil: after + LEASE });
    expect(c.events.map((e) => e.version)).toEqual([1, 2, 3]);
    expect(c.events.map((e) => e.event.type)).toEqual(['UPSERT', 'UPSERT', 'UPSERT']);
    for (const record of c.events) {
      expect(record.eventId).toMatch(UUID);
      expect(record.event.eventId).toBe(record.eventId);
      expect(record).toMatchObject({
        aggregate: 'Counter',
        aggregateId: 'a',
        attempts: 0,
        lastError: null,
        deadAt: null,
      });
      expect(record.event).toMatchObject({ aggregate: 'Counter', id: 'a', version: record.version });
      expect(record.storedAt).toBeGreaterThanOrEqual(before);
      expect(record.storedAt).toBeLessThanOrEqual(after);
      expect(record.nextAttemptAt).toBeLessThanOrEqual(after);
    }
    expect(c.events[2].event).toMatchObject({ snapshot: { id: 'a', label: 'label a', count: 2, tags: [] } });
    expect(new Set(c.events.map((e) => e.eventId)).size).toBe(3);
  });

  it('a remove stores its PURGE; a write that failed stores nothing', async () => {
    const { store, repository } = context.target();
    const counter = await writeVersions('p', 1);
    const stale = (await repository.findById('p'))!;
    counter.increment();
    await repository.update(counter); // v2
    stale.increment();
    await expect(repository.update(stale)).rejects.toBeInstanceOf(OptimisticLockError);
    await expect(repository.insert(new Counter('p', 'again'))).rejects.toThrow();
    await repository.remove(counter); // v3 PURGE
    const [c] = await claim('r', Date.now());
    expect(c.events.map((e) => [e.version, e.event.type])).toEqual([
      [1, 'UPSERT'],
      [2, 'UPSERT'],
      [3, 'PURGE'],
    ]);
    expect((await store.status(Date.now())).pending).toBe(3);
  });

  it('a write stating a stale expectedVersion stores no event; the current one stores its own', async () => {
    const { store, repository } = context.target();
    const counter = await writeVersions('ev', 2);
    const loaded = (await repository.findById('ev'))!;
    loaded.increment();
    await expect(repository.update(loaded, { expectedVersion: 1 })).rejects.toBeInstanceOf(OptimisticLockError);
    await expect(repository.remove(loaded, { expectedVersion: 1 })).rejects.toBeInstanceOf(OptimisticLockError);
    expect((await store.status(Date.now())).pending).toBe(2);
    await repository.update(loaded, { expectedVersion: 2 }); // v3
    await repository.remove(loaded, { expectedVersion: 3 }); // v4 PURGE
    const [c] = await claim('r', Date.now());
    expect(c.events.map((e) => [e.version, e.event.type])).toEqual([
      [1, 'UPSERT'],
      [2, 'UPSERT'],
      [3, 'UPSERT'],
      [4, 'PURGE'],
    ]);
    expect(counter.oldVersion).toBe(2);
  });
}
