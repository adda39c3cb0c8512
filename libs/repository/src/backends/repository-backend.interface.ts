import type { AggregateRoot } from '../aggregate/aggregate-root.js';
import type { RepositoryFeature } from '../interfaces/repository-feature.interface.js';
import type { RepositoryOutboxOptions } from '../outbox/outbox.options.js';
import type { OutboxStore } from '../outbox/outbox.interfaces.js';
import type { AbstractRepository } from '../repository/abstract-repository.js';

/** A repository of any aggregate, as a backend sees it. */
export type AnyRepository = AbstractRepository<any, AggregateRoot<any, any>>;

/** What RepositoryModule tells a backend when it hands it a repository to configure. */
export interface RepositoryBackendContext {
  /** The repository as errors name it (its class name). */
  readonly name: string;
  /**
   * The backend's outbox store when the outbox is on (what `createOutboxStore` gave), already
   * given to the repository; undefined when the outbox is off.
   */
  readonly outbox?: OutboxStore;
}

/**
 * A repository backend: the store that one family of repositories writes to (their base class),
 * plugged into RepositoryModule. The module learns everything it needs from here and never from
 * the repository classes themselves, so a backend of your own (`forRoot({ backends: [mine] })`)
 * works exactly like the built-in ones — memory, MongoDB (`uri` / `connection`) and PostgreSQL
 * (`postgres`), which RepositoryModule builds from its options.
 *
 * At bootstrap the module calls `connect` on every backend (in parallel; a failure closes the
 * ones that connected and fails the start), then `createOutboxStore` when the outbox is on, then,
 * for each repository forFeature registers, `configure` on the first backend that `owns` it
 * (yours before the built-in ones). At shutdown, after the relay stopped, `close`.
 *
 * A repository that no backend owns (a hand-written subclass of AbstractRepository) gets only
 * what every repository gets: its aggregate, the event publisher, the ID generators and its
 * unique keys' reservations — and, with the outbox on, a bootstrap error: it has no outbox store.
 */
export interface RepositoryBackend {
  /** Names the backend in health details and errors ('memory', 'mongodb', 'postgresql', yours). */
  readonly name: string;

  /** True for the repositories this backend configures (usually: `repository instanceof MyRepository`). */
  owns(repository: AnyRepository): boolean;

  /** Opens what the backend owns (a connection, a pool), at bootstrap. */
  connect?(): Promise<void>;

  /** Closes what `connect` opened, at shutdown. Clients it was given stay their owner's to close. */
  close?(): Promise<void>;

  /**
   * Gives a repository it owns what it needs from this backend (a connection, a pool, the table
   * or collection of `feature`), and checks it, throwing to fail the bootstrap. The module has
   * configured the aggregate, publisher, ID generators, unique keys and outbox already.
   */
  configure(
    repository: AnyRepository,
    feature: RepositoryFeature,
    context: RepositoryBackendContext,
  ): void | Promise<void>;

  /**
   * The outbox store of this backend's repositories: they write their events into it with each
   * write (see `AbstractRepository.outbox`), and OutboxRelay claims them from it. Called once at
   * bootstrap when the outbox is on. Without it, a repository of this backend fails the bootstrap
   * when the outbox is on (its events could be lost).
   */
  createOutboxStore?(settings: RepositoryOutboxOptions): OutboxStore | Promise<OutboxStore>;

  /** One round trip to the store, rejecting when it cannot be reached (RepositoryHealthIndicator). */
  ping?(): Promise<void>;

  /**
   * A ready-made repository for a forFeature entry that names no repository class. The module
   * uses the first backend that offers one (the memory backend's InMemoryRepository by default).
   */
  createRepository?(feature: RepositoryFeature): AnyRepository;
}
