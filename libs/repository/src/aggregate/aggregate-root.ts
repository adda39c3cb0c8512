import { DataSyncEvent } from '../data-sync/data-sync-event.js';
import { getAggregateName } from './aggregate-name.utils.js';
import type { AggregateId } from './aggregate.interfaces.js';

/**
 * The `oldVersion` of an aggregate that was never stored. Its first write (insert) stores
 * version 1; stored versions are therefore always ≥ 1, and `currentVersion` keeps -1 for
 * "no such aggregate".
 */
export const NEW_AGGREGATE_VERSION = 0;

/** What the repository keeps on an aggregate beside its domain fields. */
interface AggregateState {
  /** The version stored when the aggregate was loaded or last written; 0 while new. */
  version: number;
  deleted: boolean;
  /** Events collected by `triggerDataSyncHook` and not yet taken by a write. */
  events: DataSyncEvent[];
  /** The name of the aggregate type its repository stores it as (set by the repository). */
  typeName?: string;
  /** Its unique-key values as stored (set by the repository when it loads or writes it). */
  storedKeys?: ReadonlyMap<string, string | undefined>;
}

// The state is a private field of every aggregate its constructor built: snapshots, documents
// and copies made from the aggregate's own fields (spread, Object.assign, structuredClone, JSON)
// never carry it, no subclass field can clash with it, and reading it costs what a field does.
// An aggregate rebuilt without its constructor (Object.create, a mapper, the in-memory store's
// copies) has no such field: it gets its state on first use, under a non-enumerable symbol.
const STATE = Symbol('ddd-kit.aggregate-state');

const newState = (): AggregateState => ({ version: NEW_AGGREGATE_VERSION, deleted: false, events: [] });

let stateOf: (root: AggregateRoot<AggregateId, unknown>) => AggregateState;

function rebuiltStateOf(root: AggregateRoot<AggregateId, unknown>): AggregateState {
  const holder = root as unknown as { [STATE]?: AggregateState };
  let state = holder[STATE];
  if (state === undefined) {
    state = newState();
    Object.defineProperty(root, STATE, { value: state, enumerable: false, writable: false, configurable: true });
  }
  return state;
}

/**
 * Base class of aggregate roots. It keeps the versions the repository needs for optimistic
 * locking and collects the data-sync events read models are fed from.
 *
 * Versions: a new aggregate has `oldVersion` 0 and `newVersion` 1 (`insert` stores 1). A loaded
 * aggregate has `oldVersion` = the stored version and `newVersion` = `oldVersion + 1`: the next
 * `update` writes `newVersion` where the stored version is still `oldVersion`. After every
 * successful write both advance by one, so the same instance can be written again.
 */
export abstract class AggregateRoot<ID extends AggregateId = string, S = Record<string, unknown>> {
  /** Empty (`undefined`, `null` or `''`) until assigned; `insert` fills it from the ID generator. */
  id!: ID;

  readonly #state: AggregateState = newState();

  static {
    stateOf = (root) => (#state in root ? root.#state : rebuiltStateOf(root));
  }

  constructor(id?: ID) {
    this.id = id as ID;
  }

  /** The stored version this aggregate was loaded at (0 while it was never stored). */
  get oldVersion(): number {
    return stateOf(this).version;
  }

  /**
   * Set by whatever rebuilds the aggregate from its store: the repositories of this library do
   * it themselves; a hand-written `findById` (or mapper) sets the version it read.
   */
  set oldVersion(version: number) {
    if (!Number.isSafeInteger(version) || version < NEW_AGGREGATE_VERSION) {
      throw new RangeError(`oldVersion must be an integer ≥ ${NEW_AGGREGATE_VERSION}, got ${String(version)}`);
    }
    stateOf(this).version = version;
  }

  /**
   * The version stored now, as far as this instance knows: what it was loaded at, then what its
   * last successful write stored (0 while never stored). The same number as `oldVersion`, under
   * the name a caller reads after a write (an ETag, a reply's `version`).
   */
  get version(): number {
    return stateOf(this).version;
  }

  /** The version the next write stores. */
  get newVersion(): number {
    return stateOf(this).version + 1;
  }

  /** True until the aggregate has been inserted: `save` inserts it then, updates it after. */
  isNew(): boolean {
    return stateOf(this).version === NEW_AGGREGATE_VERSION;
  }

  isDeleted(): boolean {
    return stateOf(this).deleted;
  }

  /** Marks the aggregate deleted: its next hook collects PURGE. `remove` calls it too. */
  markDeleted(): void {
    stateOf(this).deleted = true;
  }

  /**
   * Collects what read models need to know about the write in progress: `UPSERT` with a
   * snapshot and `newVersion`, or `PURGE` once deleted. The repository calls it before every
   * insert, update and remove, and publishes what it collected once the write succeeded.
   * Override it (calling `super.triggerDataSyncHook()`) to collect more with `collectDataSyncEvent`.
   */
  triggerDataSyncHook(): void {
    const name = this.aggregateTypeName();
    this.collectDataSyncEvent(
      this.isDeleted()
        ? DataSyncEvent.purge(name, this.id, this.newVersion)
        : DataSyncEvent.upsert(name, this.id, this.newVersion, this.toSnapshot()),
    );
  }

  /** The events collected and not yet taken by a write. */
  getDataSyncEvents(): readonly DataSyncEvent<ID, S>[] {
    return [...stateOf(this).events] as DataSyncEvent<ID, S>[];
  }

  /** Same as `getDataSyncEvents()`, as a property. */
  get dataSyncEvents(): readonly DataSyncEvent<ID, S>[] {
    return this.getDataSyncEvents();
  }

  /**
   * What UPSERT carries to read models. The default is a structured clone of the aggregate's
   * own enumerable data fields (functions left out, the id included): plain data that shares
   * nothing with the aggregate. Override it to shape the read side's view.
   */
  toSnapshot(): S {
    const fields: Record<string, unknown> = {};
    let primitivesOnly = true;
    for (const key of Object.keys(this)) {
      const value = (this as Record<string, unknown>)[key];
      if (typeof value === 'function') continue;
      fields[key] = value;
      if ((typeof value === 'object' && value !== null) || typeof value === 'symbol') primitivesOnly = false;
    }
    // With primitive fields only, the copy already is what structuredClone would return, at a
    // fraction of its cost on the write path.
    return (primitivesOnly ? fields : structuredClone(fields)) as S;
  }

  /** The name events carry: the aggregate type its repository stores it as, else its class's name. */
  protected aggregateTypeName(): string {
    return stateOf(this).typeName ?? getAggregateName(this.constructor);
  }

  protected collectDataSyncEvent(event: DataSyncEvent<ID, S>): void {
    stateOf(this).events.push(event as DataSyncEvent);
  }
}

/** An aggregate class (abstract classes included): the key of repositories and handlers. */
export type AggregateClass<T extends AggregateRoot<any, any> = AggregateRoot<any, any>> = abstract new (
  ...args: any[]
) => T;

// ---- used by the repositories of this library; not part of the public surface ----

/** Runs the hook on a clean slate and takes what it collected: the events of this write only. */
export function collectWriteEvents(root: AggregateRoot<AggregateId, unknown>, typeName: string): DataSyncEvent[] {
  const state = stateOf(root);
  state.typeName = typeName;
  // Leftovers from a hook fired outside a write describe no stored fact: drop them.
  state.events = [];
  root.triggerDataSyncHook();
  const events = state.events;
  state.events = [];
  return events;
}

/** Records that `version` is now stored (after a write, or when a store loads the aggregate). */
export function setStoredVersion(root: AggregateRoot<AggregateId, unknown>, version: number, typeName?: string): void {
  const state = stateOf(root);
  state.version = version;
  if (typeName !== undefined) state.typeName = typeName;
}

export function setDeleted(root: AggregateRoot<AggregateId, unknown>, deleted: boolean): void {
  stateOf(root).deleted = deleted;
}

/** The unique-key values stored with the aggregate, when its repository recorded them. */
export function storedKeysOf(
  root: AggregateRoot<AggregateId, unknown>,
): ReadonlyMap<string, string | undefined> | undefined {
  return stateOf(root).storedKeys;
}

export function setStoredKeys(
  root: AggregateRoot<AggregateId, unknown>,
  keys: ReadonlyMap<string, string | undefined> | undefined,
): void {
  stateOf(root).storedKeys = keys;
}
