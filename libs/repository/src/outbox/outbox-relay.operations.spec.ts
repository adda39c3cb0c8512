// OutboxRelay's outbox operations on the in-process store and a fake clock: failures that are
// not retried (NonRetryableError, retryIf), events held until a time, and dead letters requeued
// and purged by filter.
import { describe, expect, it } from '@jest/globals';
import { NonRetryableError, RepositoryConfigurationError } from '../errors.js';
import { Counter } from '../testing/counter.aggregate.js';
import { HeldCounter } from '../testing/outbox-store-contract/contract-context.js';
import type { OutboxRecord } from './index.js';
import { setup, tag, writeVersions } from './__tests__/outbox-relay.fixture.js';

describe('OutboxRelay: failures not retried', () => {
  it('a handler that throws NonRetryableError dead-letters its event at the first failure; the aggregate goes on', async () => {
    const s = setup({ maxAttempts: 10 });
    s.bus.subscribe(Counter, (events) => {
      if (events[0].version === 1) throw new NonRetryableError('malformed', { cause: new Error('schema') });
      s.received.push(...events.map(tag));
    });
    await writeVersions(s.repository, 'a', 2);
    const relay = s.relay();
    await relay.drain();
    expect(s.received).toEqual(['a@2']);
    expect(relay.counters).toMatchObject({ failed: 1, deadLettered: 1 });
    const [letter] = await relay.listDeadLetters();
    expect(letter).toMatchObject({ version: 1, attempts: 1, lastError: 'NonRetryableError: malformed' });
  });

  it('one handler of several throwing NonRetryableError is enough (the others ran)', async () => {
    const s = setup();
    let transient = 0;
    s.bus.subscribe(Counter, () => {
      transient++;
      throw new Error('read model down');
    });
    s.bus.subscribe(Counter, () => {
      throw new NonRetryableError('never');
    });
    await writeVersions(s.repository, 'a', 1);
    const relay = s.relay();
    await relay.drain();
    expect(transient).toBe(1);
    expect(await relay.status()).toMatchObject({ pending: 0, deadLetters: 1 });
  });

  it('retryIf false dead-letters at once; true, or a retryIf that throws, retries after the backoff', async () => {
    const seen: Array<[string, number]> = [];
    const s = setup({
      maxAttempts: 10,
      retryIf: (error: unknown, record: OutboxRecord) => {
        seen.push([(error as Error).message, record.version]);
        if ((error as Error).message === 'odd') throw new Error('retryIf broken');
        return (error as Error).message !== 'bad request';
      },
    });
    s.bus.subscribe(Counter, (events) => {
      const id = String(events[0].id);
      if (id === 'fatal') throw new Error('bad request');
      if (id === 'flaky' || id === 'odd') throw new Error(id);
    });
    for (const id of ['fatal', 'flaky', 'odd']) await writeVersions(s.repository, id, 1);
    const relay = s.relay();
    await relay.drain();
    expect(seen.sort()).toEqual([
      ['bad request', 1],
      ['flaky', 1],
      ['odd', 1],
    ]);
    expect((await relay.listDeadLetters()).map((l) => l.aggregateId)).toEqual(['fatal']);
    expect(await relay.status()).toMatchObject({ pending: 2, deadLetters: 1 });
    s.clock.now += 1000;
    await relay.drain();
    expect(relay.counters).toMatchObject({ failed: 5, deadLettered: 1 });
  });

  it('a retryIf that is not a function is refused when the relay is made', () => {
    const s = setup();
    expect(() => s.relay({ retryIf: 'never' as unknown as () => boolean })).toThrow(RepositoryConfigurationError);
  });
});

describe('OutboxRelay: events held until availableAt', () => {
  it('a held write is delivered once due, and the later writes of its instance only after it; other instances go on', async () => {
    const s = setup();
    s.bus.subscribe(Counter, (events) => void s.received.push(...events.map(tag)));
    const until = s.clock.now + 5_000;
    const a = new HeldCounter('a', 'held');
    await s.repository.insert(a); // a@1, due
    a.hold(until).increment();
    await s.repository.update(a); // a@2, held
    a.hold(undefined).increment();
    await s.repository.update(a); // a@3, due but behind a@2
    await writeVersions(s.repository, 'b', 1);
    const relay = s.relay();
    await relay.drain();
    expect(s.received.sort()).toEqual(['a@1', 'b@1']);
    expect(await relay.status()).toMatchObject({ pending: 2 });
    s.clock.now = until - 1;
    expect(await relay.runOnce()).toBe(0);
    s.clock.now = until;
    await relay.drain();
    expect(s.received.filter((t) => t.startsWith('a'))).toEqual(['a@1', 'a@2', 'a@3']);
    expect(relay.counters).toMatchObject({ delivered: 4, failed: 0 });
  });
});

describe('OutboxRelay: dead letters requeued and purged by filter', () => {
  async function threeDeadLetters() {
    const s = setup({ maxAttempts: 1 });
    let broken = true;
    s.bus.subscribe(Counter, (events) => {
      if (broken) throw new Error('down');
      s.received.push(...events.map(tag));
    });
    await writeVersions(s.repository, 'a', 1);
    const relay = s.relay();
    await relay.drain();
    s.clock.now += 100;
    await writeVersions(s.repository, 'b', 1);
    await writeVersions(s.repository, 'c', 1);
    await relay.drain();
    broken = false;
    return { s, relay, dead: s.clock.now - 100 };
  }

  it('requeue delivers only the matching dead letters again; purge deletes them; status ages the oldest', async () => {
    const { s, relay, dead } = await threeDeadLetters();
    expect(await relay.status()).toMatchObject({ deadLetters: 3, oldestDeadLetterAgeMs: 100 });
    expect(await relay.requeueDeadLetters({ deadBefore: dead + 1 })).toBe(1);
    await relay.drain();
    expect(s.received).toEqual(['a@1']);
    expect(await relay.purgeDeadLetters({ aggregate: 'Counter', aggregateId: 'b' })).toBe(1);
    expect((await relay.listDeadLetters()).map((l) => l.aggregateId)).toEqual(['c']);
    expect(await relay.replayDeadLetters([(await relay.listDeadLetters())[0].eventId])).toBe(1);
    await relay.drain();
    expect(s.received).toEqual(['a@1', 'c@1']);
    expect(await relay.status()).toMatchObject({ pending: 0, deadLetters: 0, oldestDeadLetterAgeMs: null });
  });

  it('a bad filter is refused before any store changes', async () => {
    const { relay } = await threeDeadLetters();
    await expect(relay.purgeDeadLetters({ aggregateId: 'a' })).rejects.toThrow(/aggregateId needs aggregate/);
    await expect(relay.requeueDeadLetters(null as never)).rejects.toThrow(TypeError);
    expect(await relay.status()).toMatchObject({ deadLetters: 3 });
  });
});
