// A repository backend written here, against the public API only (no import from the library's
// sources): aggregates in a Map, its own repository base class and outbox store, plugged into
// RepositoryModule with `backends`. It runs the exported contract suites, and the module gives
// it what the built-in backends get: the outbox relayed to @OnDataSync, @UniqueKey reservations
// kept around its writes, and a place in RepositoryHealthIndicator.
import { afterEach, describe, expect, it } from '@jest/globals';
import { Inject, Injectable, Module, type INestApplicationContext } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { TerminusModule } from '@nestjs/terminus';
import { Aggregate } from '@ddd-kit/id-generator';
import { MemoryPrepareKeyFactory, PrepareKeyModule } from '@ddd-kit/prepare-key';
import {
  AbstractRepository,
  AggregateRoot,
  getRepositoryToken,
  OnDataSync,
  OptimisticLockError,
  RepositoryConfigurationError,
  RepositoryModule,
  UniqueKey,
  UniqueKeyViolationError,
  type AggregateId,
  type AggregatePage,
  type DataSyncEvent,
  type IRepository,
  type LoadedAggregate,
  type RepositoryBackend,
  type RepositoryBackendContext,
  type RepositoryFeature,
  type RepositoryOptions,
} from '@ddd-kit/repository';
import type { AnyRepository } from '../../libs/repository/src/backends/repository-backend.interface.js';
import { RepositoryHealthIndicator } from '@ddd-kit/repository/health';
import {
  InMemoryOutboxStore,
  OutboxRelay,
  type OutboxClaimRequest,
  type OutboxDeadLetterFilter,
  type OutboxDeadLetterQuery,
  type OutboxFailure,
  type OutboxStore,
} from '@ddd-kit/repository/outbox';
import {
  Counter,
  describeOutboxStoreContract,
  describeRepositoryContract,
  type CounterRepositoryClass,
} from '@ddd-kit/repository/testing';
import { waitFor } from '../support/wait.js';

// ---------------------------------------------------------------- the backend

/** The "database": one Map per aggregate name, and a switch to make it unreachable. */
class MapDatabase {
  readonly tables = new Map<string, Map<AggregateId, { version: number; document: Record<string, unknown> }>>();
  reachable = true;
  connected = false;

  table(name: string) {
    let table = this.tables.get(name);
    if (table === undefined) this.tables.set(name, (table = new Map()));
    return table;
  }
}

/**
 * The backend's outbox store: events appended in the same synchronous step as the write (so a
 * write and its events are one), claimed through the kit's in-memory bookkeeping.
 */
class MapOutboxStore implements OutboxStore {
  private readonly events = new InMemoryOutboxStore();
  append(events: readonly DataSyncEvent[]): void {
    this.events.append(events);
  }
  claim(request: OutboxClaimRequest) {
    return this.events.claim(request);
  }
  renew(owner: string, eventIds: readonly string[], leaseUntil: number) {
    return this.events.renew(owner, eventIds, leaseUntil);
  }
  ack(owner: string, eventIds: readonly string[]) {
    return this.events.ack(owner, eventIds);
  }
  fail(owner: string, eventId: string, failure: OutboxFailure) {
    return this.events.fail(owner, eventId, failure);
  }
  release(owner: string, eventIds?: readonly string[]) {
    return this.events.release(owner, eventIds);
  }
  status(now: number) {
    return this.events.status(now);
  }
  listDeadLetters(query?: OutboxDeadLetterQuery) {
    return this.events.listDeadLetters(query);
  }
  requeueDeadLetters(filter: OutboxDeadLetterFilter, now: number) {
    return this.events.requeueDeadLetters(filter, now);
  }
  purgeDeadLetters(filter: OutboxDeadLetterFilter) {
    return this.events.purgeDeadLetters(filter);
  }
  replayDeadLetters(eventIds: readonly string[], now: number) {
    return this.events.replayDeadLetters(eventIds, now);
  }
  watch(listener: () => void) {
    return this.events.watch(listener);
  }
}

interface MapRepositoryOptions<T extends AggregateRoot<any, any>> extends RepositoryOptions<T> {
  database?: MapDatabase;
}

/** The backend's repository base class: documents are the aggregate's own fields, copied. */
class MapRepository<ID extends AggregateId, T extends AggregateRoot<ID, any>> extends AbstractRepository<ID, T> {
  private database?: MapDatabase;

  constructor(options: MapRepositoryOptions<T> = {}) {
    super(options);
  }

  override configure(options: MapRepositoryOptions<T>): void {
    super.configure(options);
    if (options.database !== undefined) this.database ??= options.database;
  }

  override checkConfiguration(): void {
    if (this.database === undefined) throw new RepositoryConfigurationError(`${this.constructor.name} has no database`);
  }

  protected override acceptsOutbox(outbox: OutboxStore): boolean {
    return outbox instanceof MapOutboxStore;
  }

  private get rows() {
    if (this.database === undefined || !this.database.reachable) throw new Error('the map is unreachable');
    return this.database.table(this.aggregateName());
  }

  /** The aggregate's own data fields, copied (a spy or other function on the instance left out). */
  private toDocument(aggregate: T): Record<string, unknown> {
    const fields = Object.entries(aggregate).filter(([, value]) => typeof value !== 'function');
    return structuredClone(Object.fromEntries(fields));
  }

  private toAggregate(document: Record<string, unknown>): T {
    return Object.assign(Object.create(this.aggregateType!.prototype as object) as T, structuredClone(document));
  }

  protected async doInsert(aggregate: T, events: readonly DataSyncEvent[]): Promise<void> {
    const rows = this.rows;
    if (rows.has(aggregate.id)) throw this.duplicate(aggregate);
    const document = this.toDocument(aggregate);
    // Events first: one the outbox refuses (an availableAt that is no time) leaves nothing written.
    (this.outbox as MapOutboxStore | undefined)?.append(events);
    rows.set(aggregate.id, { version: aggregate.newVersion, document });
  }

  protected async doUpdate(aggregate: T, events: readonly DataSyncEvent[]): Promise<void> {
    const rows = this.rows;
    if (rows.get(aggregate.id)?.version !== aggregate.oldVersion) throw this.conflict(aggregate);
    const document = this.toDocument(aggregate);
    // Events first: one the outbox refuses (an availableAt that is no time) leaves nothing written.
    (this.outbox as MapOutboxStore | undefined)?.append(events);
    rows.set(aggregate.id, { version: aggregate.newVersion, document });
  }

  protected async doRemove(aggregate: T, events: readonly DataSyncEvent[]): Promise<void> {
    const rows = this.rows;
    if (rows.get(aggregate.id)?.version !== aggregate.oldVersion) throw this.conflict(aggregate);
    (this.outbox as MapOutboxStore | undefined)?.append(events);
    rows.delete(aggregate.id);
  }

  protected override async doFindById(id: ID): Promise<LoadedAggregate<T> | null> {
    const row = this.rows.get(id);
    return row === undefined ? null : { aggregate: this.toAggregate(row.document), version: row.version };
  }

  protected override async doListPage(cursor: ID | undefined, pageSize: number): Promise<AggregatePage<ID, T>> {
    const ids = [...this.rows.keys()].map(String).sort() as ID[];
    const after = cursor === undefined ? ids : ids.filter((id) => id > cursor);
    const page = after.slice(0, pageSize);
    return {
      aggregates: page.map((id) => ({
        aggregate: this.toAggregate(this.rows.get(id)!.document),
        version: this.rows.get(id)!.version,
      })),
      next: after.length > pageSize ? page[page.length - 1] : undefined,
    };
  }
}

/** The plug-in: what RepositoryModule needs to know about the Map backend, and nothing else. */
class MapBackend implements RepositoryBackend {
  readonly name = 'map';
  readonly configured: string[] = [];
  constructor(readonly database = new MapDatabase()) {}

  owns(repository: AnyRepository): boolean {
    return repository instanceof MapRepository;
  }
  async connect(): Promise<void> {
    this.database.connected = true;
  }
  async close(): Promise<void> {
    this.database.connected = false;
  }
  configure(repository: AnyRepository, feature: RepositoryFeature, context: RepositoryBackendContext): void {
    this.configured.push(
      `${context.name}:${feature.aggregate.name}:${context.outbox === undefined ? 'events' : 'outbox'}`,
    );
    (repository as MapRepository<AggregateId, AggregateRoot<AggregateId, unknown>>).configure({
      database: this.database,
    });
  }
  createOutboxStore(): MapOutboxStore {
    return new MapOutboxStore();
  }
  async ping(): Promise<void> {
    if (!this.database.reachable) throw new Error('the map is unreachable');
  }
  createRepository(): AnyRepository {
    return new MapRepository();
  }
}

// ---------------------------------------------------------------- the contract suites

class CounterMapRepository extends MapRepository<string, Counter> {}

describeRepositoryContract('a Map backend written against the public API', () => ({
  Repository: CounterMapRepository as unknown as CounterRepositoryClass,
  options: () => ({ database: new MapDatabase() }),
  close: async () => {},
}));

describeOutboxStoreContract('the Map backend’s outbox store', () => {
  const store = new MapOutboxStore();
  return {
    store,
    repository: new CounterMapRepository({ aggregate: Counter, database: new MapDatabase(), outbox: store }),
    close: async () => {},
  };
});

// ---------------------------------------------------------------- with RepositoryModule

@Aggregate({ name: 'member' })
@UniqueKey('handle', (member: Member) => member.handle)
class Member extends AggregateRoot<string> {
  constructor(
    id: string,
    public handle: string,
  ) {
    super(id);
  }
}

@Injectable()
class MemberMapRepository extends MapRepository<string, Member> {}

class Note extends AggregateRoot<string> {
  text = '';
}

@Injectable()
class Projection {
  readonly seen: string[] = [];
  @OnDataSync(Member)
  project(events: readonly DataSyncEvent[]): void {
    this.seen.push(...events.map((e) => `${e.type} ${String(e.id)}@${e.version}`));
  }
}

@Injectable()
class Readiness {
  constructor(@Inject(RepositoryHealthIndicator) readonly indicator: RepositoryHealthIndicator) {}
}

@Module({ imports: [TerminusModule], providers: [Readiness, RepositoryHealthIndicator], exports: [Readiness] })
class HealthModule {}

describe('RepositoryModule with a backend of its own (backends: [new MapBackend()])', () => {
  let app: INestApplicationContext | undefined;
  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  async function boot(backend: MapBackend, factory = new MemoryPrepareKeyFactory()) {
    const moduleRef = await Test.createTestingModule({
      imports: [
        PrepareKeyModule.forRoot({ factory }),
        RepositoryModule.forRoot({ backends: [backend], outbox: { pollIntervalMs: 20 } }),
        RepositoryModule.forFeature([{ aggregate: Member, repository: MemberMapRepository }, Note]),
        HealthModule,
      ],
      providers: [Projection],
    }).compile();
    app = await moduleRef.init();
    return {
      members: app.get<IRepository<string, Member>>(getRepositoryToken(Member)),
      notes: app.get<IRepository<string, Note>>(getRepositoryToken(Note)),
      projection: app.get(Projection),
      handles: factory.create<{ aggregate: string; id: string }>('handle'),
    };
  }

  it('connects it at bootstrap, configures its repositories (the ready-made ones too) and closes it at shutdown', async () => {
    const backend = new MapBackend();
    const { members, notes } = await boot(backend);
    expect(backend.database.connected).toBe(true);
    expect(members).toBeInstanceOf(MemberMapRepository);
    expect(notes).toBeInstanceOf(MapRepository);
    expect(backend.configured.sort()).toEqual(['MapRepository:Note:outbox', 'MemberMapRepository:Member:outbox']);
    const note = new Note('n1');
    note.text = 'kept in the map';
    await notes.insert(note);
    expect((await notes.findById('n1'))?.text).toBe('kept in the map');
    expect(backend.database.table('Note').get('n1')?.version).toBe(1);
    await app!.close();
    app = undefined;
    expect(backend.database.connected).toBe(false);
  });

  it('relays the events its writes stored in its outbox store to @OnDataSync, in version order', async () => {
    const { members, projection } = await boot(new MapBackend());
    expect(app!.get(OutboxRelay)).toBeInstanceOf(OutboxRelay);
    const member = new Member('m1', 'ann');
    await members.insert(member);
    member.handle = 'annie';
    await members.update(member);
    await members.remove(member);
    // Nothing was published in process: the relay delivered from the backend's store.
    await waitFor('the relay to deliver three events', () => projection.seen.length === 3);
    expect(projection.seen).toEqual(['UPSERT m1@1', 'UPSERT m1@2', 'PURGE m1@3']);
    expect(await app!.get(OutboxRelay).status()).toMatchObject({ pending: 0, deadLetters: 0 });
  });

  it('keeps @UniqueKey reservations around its writes: taken before, released after, refused when held', async () => {
    const { members, handles } = await boot(new MapBackend());
    const ann = new Member('m1', 'ann');
    await members.insert(ann);
    expect(await handles.get('ann')).toMatchObject({ aggregate: 'member', id: 'm1' });
    await expect(members.insert(new Member('m2', 'ann'))).rejects.toBeInstanceOf(UniqueKeyViolationError);
    expect(await members.findById('m2')).toBeNull();

    ann.handle = 'annie';
    await members.update(ann);
    expect(await handles.get('ann')).toBeUndefined();
    expect(await handles.get('annie')).toMatchObject({ id: 'm1' });

    // A write that fails definitely (a stale update) releases what it had reserved.
    const stale = (await members.findById('m1'))!;
    const fresh = (await members.findById('m1'))!;
    fresh.handle = 'anna';
    await members.update(fresh);
    stale.handle = 'ann-again';
    await expect(members.update(stale)).rejects.toBeInstanceOf(OptimisticLockError);
    expect(await handles.get('ann-again')).toBeUndefined();
    expect(await handles.get('anna')).toMatchObject({ id: 'm1' });

    await members.remove((await members.findById('m1'))!);
    expect(await handles.get('anna')).toBeUndefined();
  });

  it('is in RepositoryHealthIndicator: pinged, down while unreachable, up again', async () => {
    const backend = new MapBackend();
    await boot(backend);
    const { indicator } = app!.get(Readiness);
    expect((await indicator.isHealthy()).repository).toEqual({
      status: 'up',
      stores: ['map'],
      responseTime: expect.any(Number),
    });
    backend.database.reachable = false;
    expect((await indicator.isHealthy()).repository).toMatchObject({
      status: 'down',
      message: 'map: the map is unreachable',
    });
    backend.database.reachable = true;
    expect((await indicator.isHealthy()).repository).toMatchObject({ status: 'up' });
  });

  it('with the outbox on, a repository whose backend has no outbox store fails the bootstrap naming the backend', async () => {
    const database = new MapDatabase();
    const backend: RepositoryBackend = {
      name: 'map-without-outbox',
      owns: (repository) => repository instanceof MapRepository,
      configure: (repository) => (repository as MapRepository<string, Note>).configure({ database }),
    };
    const attempt = Test.createTestingModule({
      imports: [
        RepositoryModule.forRoot({ backends: [backend], outbox: true }),
        RepositoryModule.forFeature([{ aggregate: Note, repository: NoteMapRepository }]),
      ],
    }).compile();
    await expect(attempt).rejects.toThrow(
      /NoteMapRepository: .*its backend \(map-without-outbox\) has no outbox store/,
    );
  });
});

@Injectable()
class NoteMapRepository extends MapRepository<string, Note> {}
