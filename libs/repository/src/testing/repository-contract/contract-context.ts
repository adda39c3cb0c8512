import type { DataSyncEvent } from '../../data-sync/data-sync-event.js';
import { DataSyncEventBus } from '../../data-sync/data-sync-event-bus.js';
import type { IRepository, RepositoryOptions } from '../../repository/repository.interfaces.js';
import { Counter } from '../counter.aggregate.js';

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
export interface Fixture {
  repository: CounterRepository;
  bus: DataSyncEventBus;
  published: DataSyncEvent[];
}

export const BAD_IDS: Array<[string, unknown]> = [
  ['an operator object', { $ne: null }],
  ['a $gt object', { $gt: '' }],
  ['an array', ['a']],
  ['a boolean', true],
  ['null', null],
  ['NaN', Number.NaN],
  ['Infinity', Number.POSITIVE_INFINITY],
  ['a bigint', 10n],
  ['an empty string', ''],
];

/**
 * Ids of the right type that no store can hold: reads answer "no such aggregate", writes refuse
 * them with InvalidAggregateIdError, on every backend alike.
 */
export const UNSTORABLE_IDS: Array<[string, string]> = [
  ['a NUL byte', 'a\u0000b'],
  ['CR/LF', 'a\r\nb'],
  ['a lone high surrogate', 'a\ud800b'],
  ['a lone low surrogate', '\udc00'],
  ['an over-long string', 'x'.repeat(1025)],
  ['a 1 MB string', 'x'.repeat(1 << 20)],
];

/** What every group of cases uses: the backend's target once set up, and fixtures on it. */
export interface RepositoryContractContext {
  readonly options: RepositoryContractOptions;
  /** The backend's target (after the suite's setup ran). */
  harness(): RepositoryContractTarget;
  /** A repository on a fresh store, with every event it publishes recorded. */
  fixture(extra?: Partial<CounterRepositoryOptions>, Repository?: CounterRepositoryClass): Fixture;
  /** A counter inserted under `id`, its events forgotten. */
  stored(f: Fixture, label: string, id?: string): Promise<Counter>;
}

export function repositoryContractContext(
  options: RepositoryContractOptions,
  harness: () => RepositoryContractTarget,
): RepositoryContractContext {
  return {
    options,
    harness,
    fixture: (extra = {}, Repository = harness().Repository) => {
      const bus = new DataSyncEventBus();
      const published: DataSyncEvent[] = [];
      bus.subscribe(Counter, (events) => void published.push(...events));
      const repository = new Repository({ ...harness().options(), aggregate: Counter, publisher: bus, ...extra });
      return { repository, bus, published };
    },
    stored: async (f, label, id = `c-${label}`) => {
      const counter = new Counter(id, label);
      await f.repository.insert(counter);
      f.published.length = 0;
      return counter;
    },
  };
}
