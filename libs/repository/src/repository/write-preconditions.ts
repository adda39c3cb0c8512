import type { AggregateRoot } from '../aggregate/aggregate-root.js';
import type { AggregateId } from '../aggregate/aggregate.interfaces.js';
import { AggregateStateError, OptimisticLockError, RepositoryConfigurationError } from '../errors.js';
import type { WriteOptions } from './repository.interfaces.js';

// What each write requires of the aggregate's state, checked before anything else happens.

export function checkInsertable(name: string, aggregate: AggregateRoot<AggregateId, unknown>): void {
  if (!aggregate.isNew()) {
    throw new AggregateStateError(
      name,
      aggregate.id,
      `insert creates aggregates; this one is stored at version ${aggregate.oldVersion} (use update or save)`,
    );
  }
  if (aggregate.isDeleted())
    throw new AggregateStateError(name, aggregate.id, 'it is marked deleted; a deleted aggregate is not inserted');
}

export function checkUpdatable(name: string, aggregate: AggregateRoot<AggregateId, unknown>): void {
  if (aggregate.isNew())
    throw new AggregateStateError(
      name,
      aggregate.id,
      'update needs a stored aggregate; this one is new (use insert or save)',
    );
  if (aggregate.isDeleted()) throw new AggregateStateError(name, aggregate.id, 'it is marked deleted; use remove');
}

export function checkRemovable(name: string, aggregate: AggregateRoot<AggregateId, unknown>): void {
  if (aggregate.isNew())
    throw new AggregateStateError(name, aggregate.id, 'remove needs a stored aggregate; this one was never inserted');
}

/**
 * `options.expectedVersion` against the version the aggregate was loaded at. The store's
 * conditional write compares the stored version with `aggregate.oldVersion`; when that is the
 * expected version, the store decides, atomically with the write. When it is not, no stored
 * state can make the write right (the store is not at the expected version, or it is at a state
 * this aggregate was not derived from, whose changes the write would lose): the same
 * OptimisticLockError, before anything is reserved, written or published.
 */
export function checkExpectedVersion(
  name: string,
  aggregate: AggregateRoot<AggregateId, unknown>,
  options: WriteOptions | undefined,
  operation: 'update' | 'remove',
): void {
  const expected = options?.expectedVersion;
  if (expected === undefined) return;
  if (!Number.isSafeInteger(expected) || expected < 0)
    throw new RepositoryConfigurationError(
      `${operation}: expectedVersion must be a whole number, 0 or more (got ${String(expected)})`,
    );
  if (expected !== aggregate.oldVersion)
    throw new OptimisticLockError(name, aggregate.id, expected, aggregate.oldVersion);
}

// The write flow lives in these methods; a subclass that redefined one could skip the hook
// and leave read models behind without anyone noticing, so that is refused at construction.
const FIXED_METHODS = ['insert', 'update', 'remove', 'save'] as const;

/** Throws when a class between `target` and `base` redefines a write method. */
export function assertWriteFlowIntact(target: Function, base: object): void {
  for (let proto = target.prototype; proto && proto !== base; proto = Object.getPrototypeOf(proto)) {
    for (const method of FIXED_METHODS) {
      if (Object.prototype.hasOwnProperty.call(proto, method)) {
        throw new RepositoryConfigurationError(
          `${proto.constructor.name} redefines ${method}(): the write methods fire the data-sync hook before every write ` +
            "and may not be replaced. Implement doInsert/doUpdate/doRemove instead, extend the aggregate's " +
            'triggerDataSyncHook, or handle the published events (@OnDataSync).',
        );
      }
    }
  }
}
