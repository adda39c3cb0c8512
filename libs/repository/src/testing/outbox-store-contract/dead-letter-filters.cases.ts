import { expect, it } from '@jest/globals';
import type { OutboxDeadLetterFilter } from '../../outbox/outbox.interfaces.js';
import type { OutboxStoreContractContext } from './contract-context.js';

/**
 * Dead letters listed, requeued and purged by filter: event type, aggregate (and instance), age.
 * (Cases of describeOutboxStoreContract, see ../outbox-store.contract.ts.)
 */
export function describeDeadLetterFilterCases(context: OutboxStoreContractContext): void {
  const { writeVersions, claim } = context;

  /**
   * Dead letters a v1 (dead at t), b v1 (t+1), p v1 (t+2) and p v2 — a PURGE — (t+3), and q v1
   * pending. Resolves t and the ids by name ('p2' for p's PURGE).
   */
  async function deadLetters(): Promise<{ t: number; id: Map<string, string> }> {
    const { store, repository } = context.target();
    await writeVersions('a', 1);
    await writeVersions('b', 1);
    await repository.remove(await writeVersions('p', 1));
    const t = Date.now();
    const id = new Map<string, string>();
    const kill = async (name: string, eventId: string, at: number) => {
      id.set(name, eventId);
      expect(await store.fail('r', eventId, { error: name, retryAt: at, maxAttempts: 1, now: at })).toMatchObject({
        dead: true,
      });
    };
    const claims = await claim('r', t);
    const head = (name: string) => claims.find((c) => c.aggregateId === name)!.events[0].eventId;
    await kill('a', head('a'), t);
    await kill('b', head('b'), t + 1);
    await kill('p1', head('p'), t + 2);
    const [purge] = await claim('r', t + 3);
    expect(purge.events.map((e) => e.event.type)).toEqual(['PURGE']);
    await kill('p2', purge.events[0].eventId, t + 3);
    await writeVersions('q', 1);
    return { t, id };
  }

  const names = (letters: Array<{ eventId: string }>, id: Map<string, string>) =>
    letters.map((l) => [...id].find(([, eventId]) => eventId === l.eventId)?.[0] ?? l.eventId);

  it('dead letters are listed by event type, aggregate, instance and age; status ages the oldest', async () => {
    const { store } = context.target();
    const { t, id } = await deadLetters();
    const list = async (filter: OutboxDeadLetterFilter) => names(await store.listDeadLetters(filter), id);
    expect(await list({})).toEqual(['a', 'b', 'p1', 'p2']);
    expect(await list({ type: 'PURGE' })).toEqual(['p2']);
    expect(await list({ type: 'UPSERT', aggregate: 'Counter' })).toEqual(['a', 'b', 'p1']);
    expect(await list({ aggregate: 'Counter', aggregateId: 'p' })).toEqual(['p1', 'p2']);
    expect(await list({ aggregate: 'Other', aggregateId: 'p' })).toEqual([]);
    expect(await list({ deadBefore: t + 2 })).toEqual(['a', 'b']);
    expect(await list({ eventIds: [id.get('b')!, id.get('p2')!, 'no-such-event'] })).toEqual(['b', 'p2']);
    expect(await store.status(t + 10)).toMatchObject({ pending: 1, deadLetters: 4, oldestDeadLetterAgeMs: 10 });
  });

  it('requeue by filter makes only the matching dead letters pending again, from attempt 0', async () => {
    const { store } = context.target();
    const { t, id } = await deadLetters();
    expect(await store.requeueDeadLetters({ aggregate: 'Counter', deadBefore: t + 1 }, t + 20)).toBe(1);
    expect(await store.requeueDeadLetters({ type: 'PURGE' }, t + 20)).toBe(1);
    expect(names(await store.listDeadLetters(), id)).toEqual(['b', 'p1']);
    expect(await store.status(t + 20)).toMatchObject({ pending: 3, deadLetters: 2, oldestDeadLetterAgeMs: 19 });
    const claims = await claim('other', t + 20);
    const requeued = claims.find((c) => c.aggregateId === 'a')!.events[0];
    expect(requeued).toMatchObject({
      eventId: id.get('a'),
      attempts: 0,
      deadAt: null,
      lastError: null,
      nextAttemptAt: t + 20,
    });
    // p's PURGE is its only pending event (its v1 stays dead): it is the head, and goes.
    expect(claims.find((c) => c.aggregateId === 'p')!.events.map((e) => e.eventId)).toEqual([id.get('p2')]);
    expect(await store.requeueDeadLetters({ eventIds: [id.get('a')!] }, t + 20)).toBe(0);
  });

  it('purge by filter deletes only matching dead letters, never a pending event; {} purges every dead letter', async () => {
    const { store } = context.target();
    const { t, id } = await deadLetters();
    expect(await store.purgeDeadLetters({ aggregate: 'Counter', aggregateId: 'p', type: 'UPSERT' })).toBe(1);
    expect(names(await store.listDeadLetters(), id)).toEqual(['a', 'b', 'p2']);
    expect(await store.purgeDeadLetters({ deadBefore: t + 1 })).toBe(1);
    expect(names(await store.listDeadLetters(), id)).toEqual(['b', 'p2']);
    expect(await store.purgeDeadLetters({})).toBe(2);
    expect(await store.purgeDeadLetters({})).toBe(0);
    expect(await store.status(t + 10)).toMatchObject({ pending: 1, deadLetters: 0, oldestDeadLetterAgeMs: null });
    const [q] = await claim('r', Date.now());
    expect(q).toMatchObject({ aggregateId: 'q' });
  });

  it('a filter that is not one is refused before anything changes', async () => {
    const { store } = context.target();
    const { t } = await deadLetters();
    const bad: unknown[] = [
      null,
      'all',
      [],
      { aggregateId: 'p' },
      { aggregate: '' },
      { aggregate: { $ne: null } },
      { type: { $exists: true } },
      { aggregate: 'Counter', aggregateId: { $gt: '' } },
      { deadBefore: Number.NaN },
      { deadBefore: '2030' },
      { eventIds: 'a' },
      { eventIds: [{ $ne: null }] },
    ];
    for (const filter of bad) {
      await expect(store.purgeDeadLetters(filter as OutboxDeadLetterFilter)).rejects.toThrow(TypeError);
      await expect(store.requeueDeadLetters(filter as OutboxDeadLetterFilter, t)).rejects.toThrow(TypeError);
      await expect(store.listDeadLetters(filter as OutboxDeadLetterFilter)).rejects.toThrow(TypeError);
    }
    await expect(store.requeueDeadLetters({}, Number.NaN)).rejects.toThrow(TypeError);
    expect(await store.status(t + 10)).toMatchObject({ pending: 1, deadLetters: 4 });
  });
}
