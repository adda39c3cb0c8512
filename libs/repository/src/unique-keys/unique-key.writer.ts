import { setStoredKeys, storedKeysOf, type AggregateRoot } from '../aggregate/aggregate-root.js';
import type { AggregateId } from '../aggregate/aggregate.interfaces.js';
import {
  AggregateStateError,
  DuplicateAggregateError,
  InvalidAggregateIdError,
  MissingIdGeneratorError,
  OptimisticLockError,
  RepositoryConfigurationError,
  UniqueKeyViolationError,
} from '../errors.js';
import { getUniqueKeys } from './unique-key.decorator.js';
import type { UniqueKeyReservations, UniqueKeyResolver } from './unique-key.interfaces.js';
import { UniqueKeyReserver, type KeyRef, type KeyValues, type TakenKey } from './unique-key.reserver.js';

export type WriteKind = 'insert' | 'update' | 'remove';

/** What the writer needs of the repository it writes for (AbstractRepository gives it). */
export interface UniqueKeyWriterStore<ID extends AggregateId> {
  /** The unique-key values of the stored aggregate, or null when it is not stored. */
  storedValues(id: ID): Promise<KeyValues | null>;
  /** The stored version, or -1 (read straight from the store). */
  currentVersion(id: ID): Promise<number>;
  /** The object whose ambient transaction the writes join, if any (see AbstractRepository.transactionScope). */
  transactionScope(): object | undefined;
  /** Runs the write with what must commit with it (see AbstractRepository.inUnitOfWork). */
  inUnitOfWork<R>(work: () => Promise<R>): Promise<R>;
}

/** A write the writer let through: what is left to do once it is durable. */
export interface KeyedWrite {
  /** Releases the old values whose reservations did not go with the write's transaction. */
  releaseOld(): Promise<void>;
}

/**
 * Runs each write of one repository between the reservations of its unique keys, which the
 * UniqueKeyReserver takes and releases (a failed or unanswered step leaves a value held, never lost):
 *  - before the write, every new or changed value is reserved (UniqueKeyViolationError when
 *    another aggregate holds one: nothing is written);
 *  - the old values are released once the write is durable: inside the write's transaction when
 *    their reservations share it (`transactionScope`), after it otherwise;
 *  - a failed write releases what it reserved only when it is known not to have happened — a
 *    definite failure (a conflict, a duplicate), or an ambiguous one (a lost reply) that the
 *    stored version shows did not happen; when the store cannot say, everything stays (both
 *    values held is the recoverable state; reconciliation tidies it).
 */
export class UniqueKeyWriter<ID extends AggregateId, T extends AggregateRoot<ID, any>> {
  constructor(
    readonly reserver: UniqueKeyReserver,
    private readonly store: UniqueKeyWriterStore<ID>,
  ) {}

  /** Records the values a loaded aggregate holds as stored (its next write compares against them). */
  loaded(aggregate: T): void {
    setStoredKeys(aggregate, this.reserver.valuesOf(aggregate));
  }

  /** Runs `write` (the backend's step) between the reservations it needs; see the class comment. */
  async write(kind: WriteKind, aggregate: T, write: () => Promise<void>): Promise<KeyedWrite> {
    const reserver = this.reserver;
    const stored =
      kind === 'insert'
        ? undefined
        : (storedKeysOf(aggregate) ?? (await this.store.storedValues(aggregate.id)) ?? undefined);
    const plan = reserver.plan(kind, kind === 'remove' ? new Map() : reserver.valuesOf(aggregate), stored);
    const scope = this.store.transactionScope();
    const joins = (ref: KeyRef) => scope !== undefined && reserver.storeOf(ref.name).transactionScope === scope;
    const taken: TakenKey[] = [];
    try {
      await this.store.inUnitOfWork(async () => {
        await reserver.take(plan.take, reserver.owner(aggregate.id), taken);
        await write();
        // Old values whose reservations share the write's transaction go with it.
        await reserver.release(plan.release.filter(joins), aggregate.id, true);
      });
    } catch (error) {
      await this.afterFailedWrite(kind, aggregate, error, taken, stored, plan.release);
      throw error;
    }
    setStoredKeys(aggregate, kind === 'remove' ? undefined : plan.after);
    const others = plan.release.filter((ref) => !joins(ref));
    return { releaseOld: () => reserver.release(others, aggregate.id, false) };
  }

  /**
   * After a failed write, releases the values it had reserved — only those the write is known
   * not to need. A reservation whose value the stored aggregate holds stays.
   */
  private async afterFailedWrite(
    kind: WriteKind,
    aggregate: T,
    error: unknown,
    taken: TakenKey[],
    stored: KeyValues | undefined,
    released: readonly KeyRef[],
  ): Promise<void> {
    const reserver = this.reserver;
    if (isDefiniteFailure(error)) {
      if (taken.length === 0) return;
      // A retry may find the aggregate stored with these values: they stay.
      const now = await this.store.storedValues(aggregate.id).catch(() => 'unknown' as const);
      if (now !== 'unknown') await reserver.releaseTaken(taken, now ?? undefined);
      return;
    }
    let version: number;
    try {
      version = await this.store.currentVersion(aggregate.id);
    } catch {
      return; // the store cannot say: leave every reservation to reconciliation
    }
    if (kind === 'insert' && version === -1) await reserver.releaseTaken(taken, undefined);
    else if (kind === 'update' && version === aggregate.oldVersion) await reserver.releaseTaken(taken, stored);
    else if (kind === 'remove' && version === -1) await reserver.release(released, aggregate.id, false); // it is gone
  }
}

/**
 * The unique-key writer of a repository of `aggregate` (named `aggregateName`), or null when the aggregate
 * declares no `@UniqueKey`. `repository` names the repository class in errors.
 */
export function createUniqueKeyWriter<ID extends AggregateId, T extends AggregateRoot<ID, any>>(
  aggregate: Function | undefined,
  aggregateName: string,
  repository: string,
  resolve: UniqueKeyResolver | undefined,
  store: UniqueKeyWriterStore<ID>,
): UniqueKeyWriter<ID, T> | null {
  const definitions = aggregate === undefined ? [] : getUniqueKeys(aggregate);
  if (definitions.length === 0) return null;
  if (resolve === undefined) {
    throw new RepositoryConfigurationError(
      `${aggregate!.name} declares @UniqueKey(${definitions.map((d) => `'${d.name}'`).join(', ')}) but ${repository} ` +
        'has no reservations for them: import PrepareKeyModule.forRoot({ factory }) beside RepositoryModule (which takes them from it), ' +
        'or pass { uniqueKeys: { name: prepareKey } } to the repository.',
    );
  }
  return new UniqueKeyWriter(new UniqueKeyReserver(aggregateName, definitions, resolve), store);
}

/** The `uniqueKeys` option of a repository as a resolver (a record's missing name is a configuration error). */
export function toUniqueKeyResolver(
  given: UniqueKeyResolver | Record<string, UniqueKeyReservations>,
  repository: string,
): UniqueKeyResolver {
  if (typeof given === 'function') return given;
  return (name) => {
    const reservations = given[name];
    if (reservations === undefined)
      throw new RepositoryConfigurationError(
        `${repository}: no reservations given for unique key '${name}' (options.uniqueKeys)`,
      );
    return reservations;
  };
}

/** Errors that say the write did not happen. */
function isDefiniteFailure(error: unknown): boolean {
  return (
    error instanceof UniqueKeyViolationError ||
    error instanceof OptimisticLockError ||
    error instanceof DuplicateAggregateError ||
    error instanceof AggregateStateError ||
    error instanceof InvalidAggregateIdError ||
    error instanceof RepositoryConfigurationError ||
    error instanceof MissingIdGeneratorError
  );
}
