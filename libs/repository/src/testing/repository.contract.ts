// The cases every repository backend passes (memory, MongoDB, PostgreSQL, and yours): the
// write template, optimistic locking, the data-sync hook, ids and concurrency, run against each
// backend's repository of the contract's Counter aggregate.
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { DataSyncEvent } from '../data-sync/data-sync-event.js';
import { DataSyncEventBus } from '../data-sync/data-sync-event-bus.js';
import { AggregateStateError } from '../errors/aggregate-state.error.js';
import { DuplicateAggregateError } from '../errors/duplicate-aggregate.error.js';
import { InvalidAggregateIdError } from '../errors/invalid-aggregate-id.error.js';
import { MissingIdGeneratorError } from '../errors/missing-id-generator.error.js';
import { OptimisticLockError } from '../errors/optimistic-lock.error.js';
import { retryOnConflict } from '../repository/retry-on-conflict.js';
import type {
  AggregateIdGeneratorSource,
  IRepository,
  RepositoryOptions,
} from '../repository/repository.interfaces.js';
import { Counter } from './counter.aggregate.js';

export type CounterRepository = IRepository<string, Counter>;

/** Constructor options of a backend's Counter repository: the common ones, and the backend's own. */
export type CounterRepositoryOptions = RepositoryOptions<Counter> & Record<string, unknown>;

export type CounterRepositoryClass = new (options?: CounterRepositoryOptions) => CounterRepository;

/** What a backend hands the contract: its Counter repository, and how to give it a fresh store. */
export interface RepositoryContractTarget {
  /**
   * The backend's Counter repository class: an AbstractRepository subclass mapping `label`,
   * `count` and `tags` (cases subclass it to inject failures into `doUpdate`).
   */
  Repository: CounterRepositoryClass;
  /** Constructor options for a repository on a fresh, empty store (its own collection or table). */
  options(): CounterRepositoryOptions;
  /** Everything the store holds for `repository`, read around the repository (when the backend allows). */
  raw?(repository: CounterRepository): Promise<unknown[]>;
  close(): Promise<void>;
}

export interface RepositoryContractOptions {
  /**
   * What the store does with a numeric id: keeps it apart from the equal string (documents,
   * memory; the default), or refuses it before anything is sent (a text id column, which
   * would hand it back as a string).
   */
  numericIds?: 'distinct' | 'refused';
}

/** A repository on a fresh store, with every event it publishes recorded. */
interface Fixture {
  repository: CounterRepository;
  bus: DataSyncEventBus;
  published: DataSyncEvent[];
}

const BAD_IDS: Array<[string, unknown]> = [
  ['an operator object', { $ne: null }],
  ['a $gt object', { $gt: '' }],
  ['an array', ['a']],
  ['a boolean', true],
  ['null', null],
  ['NaN', Number.NaN],
  ['Infinity', Number.POSITIVE_INFINITY],
  ['a bigint', 10n],
  ['an empty string', ''],
  ['an over-long string', 'x'.repeat(1025)],
];

/**
 * Defines the cases for one backend. `setup` runs once (beforeAll) and `close` once (afterAll);
 * every case asks `options()` for a fresh store, so the suite can share a server.
 *
 * ```ts
 * describeRepositoryContract('my store', async () => ({
 *   Repository: MyCounterRepository,
 *   options: () => ({ namespace: randomUUID() }),
 *   close: async () => {},
 * }));
 * ```
 */
export function describeRepositoryContract(
  name: string,
  setup: () => RepositoryContractTarget | Promise<RepositoryContractTarget>,
  options: RepositoryContractOptions = {},
): void {
  describe(`repository contract: ${name}`, () => {
    let harness: RepositoryContractTarget;

    beforeAll(async () => {
      harness = await setup();
    });
    afterAll(async () => {
      await harness?.close();
    });

    function fixture(
      extra: Partial<CounterRepositoryOptions> = {},
      Repository: CounterRepositoryClass = harness.Repository,
    ): Fixture {
      const bus = new DataSyncEventBus();
      const published: DataSyncEvent[] = [];
      bus.subscribe(Counter, (events) => void published.push(...events));
      const repository = new Repository({ ...harness.options(), aggregate: Counter, publisher: bus, ...extra });
      return { repository, bus, published };
    }

    async function stored(f: Fixture, label: string, id = `c-${label}`): Promise<Counter> {
      const counter = new Counter(id, label);
      await f.repository.insert(counter);
      f.published.length = 0;
      return counter;
    }

    describe('versions', () => {
      it('insert stores version 1 and advances the instance to oldVersion 1 / newVersion 2', async () => {
        const f = fixture();
        const counter = new Counter('a', 'first');
        expect([counter.isNew(), counter.oldVersion, counter.newVersion]).toEqual([true, 0, 1]);
        await f.repository.insert(counter);
        expect([counter.isNew(), counter.oldVersion, counter.newVersion]).toEqual([false, 1, 2]);
        expect(await f.repository.currentVersion('a')).toBe(1);
      });

      it('findById returns a copy at the stored version (old = stored, new = stored + 1), or null', async () => {
        const f = fixture();
        const counter = await stored(f, 'x');
        counter.increment(5);
        counter.tags.push('t');
        await f.repository.update(counter);
        const loaded = await f.repository.findById(counter.id);
        expect(loaded).toBeInstanceOf(Counter);
        expect(loaded).not.toBe(counter);
        expect([loaded!.oldVersion, loaded!.newVersion, loaded!.isNew()]).toEqual([2, 3, false]);
        expect({ id: loaded!.id, label: loaded!.label, count: loaded!.count, tags: loaded!.tags }).toEqual({
          id: counter.id,
          label: 'x',
          count: 5,
          tags: ['t'],
        });
        // Changing the loaded copy changes nothing stored until a write.
        loaded!.tags.push('local');
        loaded!.increment();
        const again = await f.repository.findById(counter.id);
        expect([again!.count, again!.tags]).toEqual([5, ['t']]);
        expect(await f.repository.findById('missing')).toBeNull();
      });

      it('the same instance can be written again and again: each write advances both versions', async () => {
        const f = fixture();
        const counter = await stored(f, 'loop');
        for (let i = 1; i <= 5; i++) {
          counter.increment();
          await f.repository.update(counter);
          expect([counter.oldVersion, counter.newVersion]).toEqual([i + 1, i + 2]);
        }
        expect(await f.repository.currentVersion(counter.id)).toBe(6);
        expect((await f.repository.findById(counter.id))!.count).toBe(5);
      });

      it('currentVersion is -1 and existsById false for a missing aggregate, without throwing', async () => {
        const f = fixture();
        await expect(f.repository.currentVersion('never')).resolves.toBe(-1);
        await expect(f.repository.existsById('never')).resolves.toBe(false);
        await stored(f, 'here', 'here');
        await expect(f.repository.existsById('here')).resolves.toBe(true);
      });

      it('save inserts a new aggregate and updates a stored one', async () => {
        const f = fixture();
        const counter = new Counter('s', 'saved');
        await f.repository.save(counter);
        expect(await f.repository.currentVersion('s')).toBe(1);
        const loaded = (await f.repository.findById('s'))!;
        loaded.increment();
        await f.repository.save(loaded);
        expect(await f.repository.currentVersion('s')).toBe(2);
        expect(f.published.map((e) => [e.type, e.version])).toEqual([
          ['UPSERT', 1],
          ['UPSERT', 2],
        ]);
      });

      it('refuses writes that do not fit the state: update/remove of a new aggregate, insert of a stored one', async () => {
        const f = fixture();
        await expect(f.repository.update(new Counter('n1', 'new'))).rejects.toBeInstanceOf(AggregateStateError);
        await expect(f.repository.remove(new Counter('n2', 'new'))).rejects.toBeInstanceOf(AggregateStateError);
        const counter = await stored(f, 'st');
        await expect(f.repository.insert(counter)).rejects.toBeInstanceOf(AggregateStateError);
        const deleted = (await f.repository.findById(counter.id))!;
        deleted.markDeleted();
        await expect(f.repository.update(deleted)).rejects.toBeInstanceOf(AggregateStateError);
        expect(await f.repository.currentVersion('n1')).toBe(-1);
        expect(await f.repository.currentVersion(counter.id)).toBe(1);
        expect(f.published).toEqual([]);
      });
    });

    describe('the data-sync hook', () => {
      it('fires once before every insert, update, save and remove, and what it collected is what is published', async () => {
        const f = fixture();
        const counter = new Counter('h', 'hooked');
        const hook = jest.spyOn(counter, 'triggerDataSyncHook');

        await f.repository.insert(counter);
        expect(hook).toHaveBeenCalledTimes(1);
        counter.increment();
        await f.repository.update(counter);
        expect(hook).toHaveBeenCalledTimes(2);
        counter.increment();
        await f.repository.save(counter);
        expect(hook).toHaveBeenCalledTimes(3);
        await f.repository.remove(counter);
        expect(hook).toHaveBeenCalledTimes(4);

        expect(f.published).toEqual([
          {
            type: 'UPSERT',
            eventId: expect.any(String),
            aggregate: 'Counter',
            id: 'h',
            version: 1,
            snapshot: { id: 'h', label: 'hooked', count: 0, tags: [] },
          },
          {
            type: 'UPSERT',
            eventId: expect.any(String),
            aggregate: 'Counter',
            id: 'h',
            version: 2,
            snapshot: { id: 'h', label: 'hooked', count: 1, tags: [] },
          },
          {
            type: 'UPSERT',
            eventId: expect.any(String),
            aggregate: 'Counter',
            id: 'h',
            version: 3,
            snapshot: { id: 'h', label: 'hooked', count: 2, tags: [] },
          },
          { type: 'PURGE', eventId: expect.any(String), aggregate: 'Counter', id: 'h', version: 4 },
        ]);
      });

      it('publishes what an extended hook collects, and only for the write it fired for', async () => {
        class AuditedCounter extends Counter {
          override triggerDataSyncHook(): void {
            super.triggerDataSyncHook();
            this.collectDataSyncEvent(
              DataSyncEvent.upsert('CounterAudit', this.id, this.newVersion, { audited: true } as never),
            );
          }
        }
        const f = fixture();
        const counter = new AuditedCounter('aud', 'audited');
        // A hook fired outside a write describes no stored fact: the next write drops it.
        counter.triggerDataSyncHook();
        expect(counter.getDataSyncEvents()).toHaveLength(2);
        await f.repository.insert(counter);
        expect(f.published.map((e) => [e.aggregate, e.version])).toEqual([
          ['Counter', 1],
          ['CounterAudit', 1],
        ]);
        expect(counter.getDataSyncEvents()).toEqual([]);
      });

      it('a snapshot is taken at hook time: changing the aggregate afterwards does not change a published event', async () => {
        const f = fixture();
        const counter = new Counter('snap', 'snap');
        await f.repository.insert(counter);
        counter.tags.push('later');
        const event = f.published[0];
        expect(event.type === 'UPSERT' && event.snapshot).toEqual({ id: 'snap', label: 'snap', count: 0, tags: [] });
        expect(Object.isFrozen(event)).toBe(true);
      });
    });

    describe('failed writes publish nothing', () => {
      it('a stale update is an OptimisticLockError (aggregate, id, expected version); nothing published or written', async () => {
        const f = fixture();
        await stored(f, 'race', 'race');
        const first = (await f.repository.findById('race'))!;
        const second = (await f.repository.findById('race'))!;
        first.increment(1);
        second.increment(100);
        await f.repository.update(first);
        const error = await f.repository.update(second).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(OptimisticLockError);
        expect(error).toMatchObject({ aggregate: 'Counter', id: 'race', expectedVersion: 1 });
        expect([second.oldVersion, second.newVersion]).toEqual([1, 2]);
        expect(f.published.map((e) => e.version)).toEqual([2]);
        const now = (await f.repository.findById('race'))!;
        expect([now.count, now.oldVersion]).toEqual([1, 2]);
      });

      it('a doUpdate that throws publishes nothing and leaves the versions; the retry publishes exactly once', async () => {
        let failures = 1;
        const Failing = class extends (harness.Repository as unknown as new (o: object) => {
          doUpdate(c: Counter): Promise<void>;
        }) {
          override async doUpdate(counter: Counter): Promise<void> {
            if (failures-- > 0) throw new Error('store unavailable');
            return super.doUpdate(counter);
          }
        } as unknown as CounterRepositoryClass;
        const f = fixture({}, Failing);
        const counter = await stored(f, 'flaky');
        counter.increment();
        await expect(f.repository.update(counter)).rejects.toThrow('store unavailable');
        expect(f.published).toEqual([]);
        expect([counter.oldVersion, counter.newVersion]).toEqual([1, 2]);
        expect(await f.repository.currentVersion(counter.id)).toBe(1);

        await f.repository.update(counter);
        expect(f.published).toHaveLength(1);
        expect(f.published[0]).toMatchObject({ type: 'UPSERT', version: 2, snapshot: { count: 1 } });
        expect(await f.repository.currentVersion(counter.id)).toBe(2);
      });

      it('a duplicate insert is a DuplicateAggregateError and publishes nothing', async () => {
        const f = fixture();
        await stored(f, 'dup', 'dup');
        await expect(f.repository.insert(new Counter('dup', 'other'))).rejects.toBeInstanceOf(DuplicateAggregateError);
        expect(f.published).toEqual([]);
        expect((await f.repository.findById('dup'))!.label).toBe('dup');
      });

      it('a handler that throws does not fail the write (it is stored) nor starve the other handlers', async () => {
        const errors: unknown[] = [];
        const bus = new DataSyncEventBus({ onHandlerError: (error) => void errors.push(error) });
        const received: DataSyncEvent[] = [];
        bus.subscribe(Counter, () => {
          throw new Error('projection down');
        });
        bus.subscribe(Counter, (events) => void received.push(...events));
        const repository = new harness.Repository({ ...harness.options(), aggregate: Counter, publisher: bus });
        await repository.insert(new Counter('h1', 'x'));
        expect(await repository.currentVersion('h1')).toBe(1);
        expect(errors).toHaveLength(1);
        expect(received.map((e) => e.id)).toEqual(['h1']);
      });
    });

    describe('remove', () => {
      it('publishes PURGE, after which currentVersion is -1, findById null and existsById false', async () => {
        const f = fixture();
        const counter = await stored(f, 'gone', 'gone');
        counter.increment();
        await f.repository.update(counter);
        await f.repository.remove(counter);
        expect(f.published.map((e) => [e.type, e.version])).toEqual([
          ['UPSERT', 2],
          ['PURGE', 3],
        ]);
        expect(await f.repository.currentVersion('gone')).toBe(-1);
        expect(await f.repository.findById('gone')).toBeNull();
        expect(await f.repository.existsById('gone')).toBe(false);
      });

      it('a stale remove is an OptimisticLockError, deletes nothing, publishes nothing and unmarks the aggregate', async () => {
        const f = fixture();
        await stored(f, 'keep', 'keep');
        const stale = (await f.repository.findById('keep'))!;
        const fresh = (await f.repository.findById('keep'))!;
        fresh.increment();
        await f.repository.update(fresh);
        f.published.length = 0;
        await expect(f.repository.remove(stale)).rejects.toBeInstanceOf(OptimisticLockError);
        expect(stale.isDeleted()).toBe(false);
        expect(f.published).toEqual([]);
        expect(await f.repository.currentVersion('keep')).toBe(2);
        // Removing what is already gone is a conflict too: the PURGE was published by the remove that won.
        await f.repository.remove(fresh);
        await expect(f.repository.remove((await f.repository.findById('keep')) ?? stale)).rejects.toBeInstanceOf(
          OptimisticLockError,
        );
        expect(f.published.map((e) => e.type)).toEqual(['PURGE']);
      });
    });

    describe('ids', () => {
      it.each(BAD_IDS)('refuses %s on every operation, changes nothing and publishes nothing', async (_what, badId) => {
        const f = fixture();
        const a = await stored(f, 'a', 'id-a');
        const b = await stored(f, 'b', 'id-b');
        const before = await harness.raw?.(f.repository);

        const bad = <T>(p: Promise<T>) => expect(p).rejects.toBeInstanceOf(InvalidAggregateIdError);
        await bad(f.repository.findById(badId as string));
        await bad(f.repository.currentVersion(badId as string));
        await bad(f.repository.existsById(badId as string));

        const fresh = new Counter('tmp', 'bad-insert');
        fresh.id = badId as string;
        if (badId === null || badId === '') {
          // Empty ids mean "generate one", and there is no generator here.
          await expect(f.repository.insert(fresh)).rejects.toBeInstanceOf(MissingIdGeneratorError);
        } else {
          await bad(f.repository.insert(fresh));
        }

        const loaded = (await f.repository.findById('id-a'))!;
        loaded.increment(1000);
        loaded.id = badId as string;
        await bad(f.repository.update(loaded));
        await bad(f.repository.remove(loaded));
        expect(loaded.isDeleted()).toBe(false);

        expect(f.published).toEqual([]);
        for (const original of [a, b]) {
          const now = (await f.repository.findById(original.id))!;
          expect([now.oldVersion, now.count]).toEqual([1, 0]);
        }
        if (harness.raw) expect(await harness.raw(f.repository)).toEqual(before);
      });

      it('accepts string ids as plain values; a numeric id is kept apart from the equal string, or refused — never confused with it', async () => {
        const f = fixture();
        const counter = new Counter('$ne', 'dollar');
        await f.repository.insert(counter);
        expect(await f.repository.currentVersion('$ne')).toBe(1);
        expect((await f.repository.findById('$ne'))!.label).toBe('dollar');
        const numeric = new Counter(42 as unknown as string, 'numeric');
        if (options.numericIds === 'refused') {
          await expect(f.repository.insert(numeric)).rejects.toBeInstanceOf(InvalidAggregateIdError);
          await expect(f.repository.currentVersion(42 as unknown as string)).rejects.toBeInstanceOf(
            InvalidAggregateIdError,
          );
          expect(numeric.isNew()).toBe(true);
          expect(await f.repository.currentVersion('42')).toBe(-1);
          return;
        }
        await f.repository.insert(numeric);
        expect(await f.repository.currentVersion(42 as unknown as string)).toBe(1);
        expect(await f.repository.currentVersion('42')).toBe(-1);
      });

      it('insert without an id fails with MissingIdGeneratorError when no generator is configured, storing nothing', async () => {
        const f = fixture();
        const counter = new Counter(undefined, 'anonymous');
        await expect(f.repository.insert(counter)).rejects.toBeInstanceOf(MissingIdGeneratorError);
        expect(counter.isNew()).toBe(true);
        expect(f.published).toEqual([]);
      });

      it("insert without an id takes one from the aggregate's generator", async () => {
        let n = 0;
        const asked: unknown[] = [];
        const idGenerators: AggregateIdGeneratorSource = {
          get(aggregate) {
            asked.push(aggregate);
            return { generate: () => `gen-${++n}` };
          },
        };
        const f = fixture({ idGenerators });
        const first = new Counter(undefined, 'one');
        const second = new Counter('', 'two');
        await f.repository.insert(first);
        await f.repository.insert(second);
        expect([first.id, second.id]).toEqual(['gen-1', 'gen-2']);
        expect(asked).toEqual([Counter, Counter]);
        expect((await f.repository.findById('gen-2'))!.label).toBe('two');
        expect(f.published.map((e) => e.id)).toEqual(['gen-1', 'gen-2']);
      });
    });

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
  });
}
