import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Inject, Injectable, Module, type INestApplicationContext } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import mongoose, { type Connection } from 'mongoose';
import {
  AggregateRoot,
  DataSyncEventBus,
  getRepositoryToken,
  InjectRepository,
  InMemoryRepository,
  OnDataSync,
  OptimisticLockError,
  RepositoryConfigurationError,
  RepositoryModule,
  type DataSyncEvent,
  type IRepository,
} from '@ddd-kit/repository';
import { InMemoryReadReplica } from '@ddd-kit/repository/reconciliation';
import { mongoUri, uniqueName } from '../support/servers.js';
import { Counter, CounterMongooseRepository, type CounterSnapshot } from './support/counter.aggregate.js';

class Note extends AggregateRoot<string> {
  constructor(
    id: string,
    public text: string,
  ) {
    super(id);
  }
}

/** A read model kept by @OnDataSync, the way an application keeps one. */
@Injectable()
class CounterProjection {
  readonly replica = new InMemoryReadReplica<string, CounterSnapshot>();
  readonly received: DataSyncEvent[][] = [];

  @OnDataSync(Counter)
  project(events: readonly DataSyncEvent[]): void {
    this.received.push([...events]);
    this.replica.apply(events);
  }
}

@Injectable()
class NoteProjection {
  readonly received: DataSyncEvent[] = [];

  @OnDataSync(Note)
  async onNotes(events: readonly DataSyncEvent[]): Promise<void> {
    await new Promise((resolve) => setImmediate(resolve));
    this.received.push(...events);
  }
}

@Injectable()
class CounterService {
  constructor(
    @InjectRepository(Counter) readonly counters: IRepository<string, Counter>,
    readonly byClass: CounterMongooseRepository,
    @InjectRepository(Note) readonly notes: IRepository<string, Note>,
  ) {}
}

const CLOCK = 'CLOCK';

/** A repository class with a dependency of its own: Nest constructs it. */
@Injectable()
class ClockedNoteRepository extends InMemoryRepository<string, Note> {
  constructor(@Inject(CLOCK) readonly clock: () => number) {
    super();
  }
}

describe('RepositoryModule', () => {
  describe('forRoot({ uri }) + forFeature + @InjectRepository + @OnDataSync', () => {
    let app: INestApplicationContext;
    let dbName: string;

    @Module({
      imports: [
        RepositoryModule.forFeature([
          { aggregate: Counter, repository: CounterMongooseRepository, collection: 'counters' },
          Note,
        ]),
      ],
      providers: [CounterService, CounterProjection, NoteProjection],
    })
    class FeatureModule {}

    beforeAll(async () => {
      dbName = uniqueName('repository_module');
      const uri = new URL(mongoUri());
      uri.pathname = `/${dbName}`;
      const moduleRef = await Test.createTestingModule({
        imports: [RepositoryModule.forRoot({ uri: uri.toString() }), FeatureModule],
      }).compile();
      app = await moduleRef.init();
    });

    afterAll(async () => {
      const counters = app.get(CounterMongooseRepository);
      const connection = (counters as unknown as { connection: Connection }).connection;
      try {
        await connection.db!.collection('counters').deleteMany({});
      } finally {
        await app.close();
      }
      // The module opened this connection from the uri, so shutting down closed it.
      expect(connection.readyState).toBe(mongoose.ConnectionStates.disconnected);
    });

    it('injects one configured repository by aggregate token and by class', async () => {
      const service = app.get(CounterService);
      expect(service.counters).toBeInstanceOf(CounterMongooseRepository);
      expect(service.counters).toBe(service.byClass);
      expect(app.get(getRepositoryToken(Counter))).toBe(service.counters);
      expect(service.notes).toBeInstanceOf(InMemoryRepository);
      const counter = new Counter('m1', 'module');
      await service.counters.insert(counter);
      // It went to the collection forFeature named, in the database of the uri.
      const connection = (service.byClass as unknown as { connection: Connection }).connection;
      expect(connection.name).toBe(dbName);
      expect(await connection.db!.collection('counters').findOne({ _id: 'm1' as never })).toMatchObject({
        label: 'module',
        count: 0,
        version: 1,
      });
    });

    it('calls @OnDataSync handlers with the events of each successful write, before the write returns', async () => {
      const { counters } = app.get(CounterService);
      const projection = app.get(CounterProjection);
      projection.received.length = 0;
      const counter = new Counter('m2', 'projected');
      await counters.insert(counter);
      expect(projection.replica.get('m2')).toMatchObject({ version: 1, snapshot: { label: 'projected' } });
      counter.increment(3);
      await counters.update(counter);
      expect(projection.replica.get('m2')).toMatchObject({ version: 2, snapshot: { count: 3 } });
      await counters.remove(counter);
      expect(projection.replica.get('m2')).toBeUndefined();
      expect(projection.received.map((batch) => batch.map((e) => `${e.type}@${e.version}`))).toEqual([
        ['UPSERT@1'],
        ['UPSERT@2'],
        ['PURGE@3'],
      ]);
    });

    it('does not call handlers for a write that failed', async () => {
      const { counters } = app.get(CounterService);
      const projection = app.get(CounterProjection);
      await counters.insert(new Counter('m3', 'contended'));
      const a = (await counters.findById('m3'))!;
      const b = (await counters.findById('m3'))!;
      await counters.update(a);
      projection.received.length = 0;
      await expect(counters.update(b)).rejects.toBeInstanceOf(OptimisticLockError);
      expect(projection.received).toEqual([]);
      expect(projection.replica.get('m3')!.version).toBe(2);
    });

    it('routes events by aggregate: Note handlers get Note events only (and async handlers are awaited)', async () => {
      const { notes } = app.get(CounterService);
      const noteProjection = app.get(NoteProjection);
      const counterProjection = app.get(CounterProjection);
      counterProjection.received.length = 0;
      await notes.insert(new Note('n1', 'hello'));
      expect(noteProjection.received).toEqual([
        {
          type: 'UPSERT',
          eventId: expect.any(String),
          aggregate: 'Note',
          id: 'n1',
          version: 1,
          snapshot: { id: 'n1', text: 'hello' },
        },
      ]);
      expect(counterProjection.received).toEqual([]);
      expect(app.get(DataSyncEventBus).handlerCount(Note)).toBe(1);
    });
  });

  describe('forRootAsync, shared instances, constructor dependencies', () => {
    it('builds options from a factory with injected dependencies and uses a connection it does not own', async () => {
      const connection = await mongoose
        .createConnection(mongoUri(), { dbName: uniqueName('repository_async') })
        .asPromise();
      const errors: unknown[] = [];
      @Module({ providers: [{ provide: 'CONN', useValue: connection }], exports: ['CONN'] })
      class ConfigModule {}

      @Injectable()
      class Failing {
        @OnDataSync(Counter)
        fail(): void {
          throw new Error('projection down');
        }
      }

      const moduleRef = await Test.createTestingModule({
        imports: [
          RepositoryModule.forRootAsync({
            imports: [ConfigModule],
            inject: ['CONN'],
            useFactory: (conn: Connection) => ({
              connection: conn,
              onDataSyncError: (error: unknown) => void errors.push(error),
            }),
          }),
          RepositoryModule.forFeature([{ aggregate: Counter, repository: CounterMongooseRepository }]),
        ],
        providers: [Failing],
      }).compile();
      const app = await moduleRef.init();
      try {
        const counters = app.get<IRepository<string, Counter>>(getRepositoryToken(Counter));
        await counters.insert(new Counter('a1', 'async'));
        // The handler failed; the write stands and the error went to onDataSyncError.
        expect(await counters.currentVersion('a1')).toBe(1);
        expect(errors).toHaveLength(1);
        expect(await connection.db!.collection('Counter').countDocuments()).toBe(1);
      } finally {
        await app.close();
      }
      // Not the module's connection: still open after shutdown.
      expect(connection.readyState).toBe(mongoose.ConnectionStates.connected);
      await connection.db!.collection('Counter').deleteMany({});
      await connection.close();
    });

    it('shares one repository per aggregate across modules and constructs repository classes with their dependencies', async () => {
      // Not global: the repository class gets its dependency through forFeature's imports.
      @Module({ providers: [{ provide: CLOCK, useValue: () => 42 }], exports: [CLOCK] })
      class ClockModule {}
      @Module({
        imports: [
          RepositoryModule.forFeature([{ aggregate: Note, repository: ClockedNoteRepository }], {
            imports: [ClockModule],
          }),
        ],
        exports: [RepositoryModule],
      })
      class A {}
      @Module({
        imports: [
          RepositoryModule.forFeature([{ aggregate: Note, repository: ClockedNoteRepository }], {
            imports: [ClockModule],
          }),
        ],
        exports: [RepositoryModule],
      })
      class B {}

      const moduleRef = await Test.createTestingModule({ imports: [RepositoryModule.forRoot(), A, B] }).compile();
      const app = await moduleRef.init();
      try {
        const fromA = app.select(A).get(ClockedNoteRepository);
        const fromB = app.select(B).get(ClockedNoteRepository);
        expect(fromA).toBe(fromB);
        expect(fromA.clock()).toBe(42);
        await fromA.insert(new Note('shared', 'one store'));
        expect(
          await app.select(B).get<IRepository<string, Note>>(getRepositoryToken(Note)).currentVersion('shared'),
        ).toBe(1);
      } finally {
        await app.close();
      }
    });
  });

  describe('bootstrap errors', () => {
    it('a MongooseRepository without a connection fails at bootstrap saying how to configure one', async () => {
      const compile = Test.createTestingModule({
        imports: [
          RepositoryModule.forRoot(),
          RepositoryModule.forFeature([{ aggregate: Counter, repository: CounterMongooseRepository }]),
        ],
      }).compile();
      await expect(compile).rejects.toThrow(RepositoryConfigurationError);
      await expect(
        Test.createTestingModule({
          imports: [
            RepositoryModule.forRoot(),
            RepositoryModule.forFeature([{ aggregate: Counter, repository: CounterMongooseRepository }]),
          ],
        }).compile(),
      ).rejects.toThrow(/RepositoryModule has no connection: pass \{ uri \} or \{ connection \}/);
    });

    it('invalid forRoot options fail with RepositoryConfigurationError', () => {
      expect(() => RepositoryModule.forRoot({ uri: 'http://nope' })).toThrow(RepositoryConfigurationError);
      expect(() => RepositoryModule.forRoot({ uri: mongoUri(), connection: {} as Connection })).toThrow(
        /either uri .* or connection/,
      );
      expect(() => RepositoryModule.forRoot({ connection: {} as Connection })).toThrow(/Mongoose Connection/);
    });

    it('invalid forRootAsync options fail at bootstrap', async () => {
      await expect(
        Test.createTestingModule({
          imports: [RepositoryModule.forRootAsync({ useFactory: () => ({ uri: 'redis://x' }) })],
        }).compile(),
      ).rejects.toThrow(RepositoryConfigurationError);
      expect(() => RepositoryModule.forRootAsync({})).toThrow(/exactly one of useFactory, useClass, useExisting/);
    });

    it('invalid forFeature entries fail where they are declared', () => {
      class NotAnAggregate {}
      expect(() => RepositoryModule.forFeature([NotAnAggregate])).toThrow(/class extending AggregateRoot/);
      expect(() => RepositoryModule.forFeature([{ aggregate: undefined as never }])).toThrow(/circular import/);
      expect(() => RepositoryModule.forFeature([{ aggregate: Note, repository: NotAnAggregate as never }])).toThrow(
        /repository must be a class extending AbstractRepository/,
      );
      expect(() => RepositoryModule.forFeature([{ aggregate: Note, collection: 'notes' }])).toThrow(
        /collection needs a MongooseRepository/,
      );
    });

    it('two repositories for one aggregate fail at bootstrap naming both', async () => {
      await expect(
        Test.createTestingModule({
          imports: [
            RepositoryModule.forRoot(),
            RepositoryModule.forFeature([Note]),
            RepositoryModule.forFeature([{ aggregate: Note, repository: ClockedNoteRepository }]),
          ],
          providers: [{ provide: CLOCK, useValue: () => 1 }],
        }).compile(),
      ).rejects.toThrow(/Note is registered with two repositories/);
    });

    it('a repository class that redefines a write method fails at bootstrap', async () => {
      @Injectable()
      class SneakyRepository extends InMemoryRepository<string, Note> {
        override async update(note: Note): Promise<void> {
          await this.doUpdate(note);
        }
      }
      await expect(
        Test.createTestingModule({
          imports: [
            RepositoryModule.forRoot(),
            RepositoryModule.forFeature([{ aggregate: Note, repository: SneakyRepository }]),
          ],
        }).compile(),
      ).rejects.toThrow(/SneakyRepository redefines update\(\)/);
    });
  });
});
