// RepositoryModule.forRoot({ uri, outbox }) with a MongooseRepository from forFeature: the
// module's MongoDB outbox store (events inside the aggregate's document) and its relay, on the
// MongoDB-wire server of the run (the jongodb emulator unless MONGODB_URI names a MongoDB).
import { afterEach, describe, expect, it, jest } from '@jest/globals';
import { Injectable, type INestApplicationContext, type OnApplicationShutdown } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import mongoose from 'mongoose';
import {
  OnDataSync,
  RepositoryModule,
  getRepositoryToken,
  type DataSyncEvent,
  type IRepository,
  type RepositoryOutboxOptions,
} from '@ddd-kit/repository';
import { OutboxRelay } from '@ddd-kit/repository/outbox';
import { mongoLabel, mongoUri, uniqueName } from '../support/servers.js';
import { waitFor } from '../support/wait.js';
import { Counter, CounterMongooseRepository } from './support/counter.aggregate.js';

@Injectable()
class Projection {
  readonly received: string[] = [];
  @OnDataSync(Counter)
  project(events: readonly DataSyncEvent[]): void {
    this.received.push(...events.map((e) => `${String(e.id)}@${e.version}`));
  }
}

async function start(
  dbName: string,
  outbox: boolean | RepositoryOutboxOptions,
  providers: Function[] = [],
): Promise<INestApplicationContext> {
  const moduleRef = await Test.createTestingModule({
    imports: [
      RepositoryModule.forRoot({ uri: mongoUri(), connectionOptions: { dbName }, outbox }),
      RepositoryModule.forFeature([
        { aggregate: Counter, repository: CounterMongooseRepository, collection: 'counters' },
      ]),
    ],
    providers: [Projection, ...(providers as never[])],
  }).compile();
  const app = moduleRef.createNestApplication({ logger: false });
  await app.init();
  return app;
}

describe(`RepositoryModule.forRoot({ uri, outbox }) with a MongooseRepository on ${mongoLabel()}`, () => {
  const apps: INestApplicationContext[] = [];
  afterEach(async () => {
    for (const app of apps.splice(0)) await app.close();
  });

  it('a write keeps its event in the document, not published in process; the relay delivers it to the @OnDataSync handler', async () => {
    const dbName = uniqueName('outbox_module');
    const app = await start(dbName, { relay: false });
    apps.push(app);
    const counters = app.get<IRepository<string, Counter>>(getRepositoryToken(Counter));
    await counters.insert(new Counter('a', 'x'));
    const projection = app.get(Projection);
    expect(projection.received).toEqual([]);
    const relay = app.get(OutboxRelay);
    expect(await relay.status()).toMatchObject({ pending: 1, deadLetters: 0 });
    await relay.drain();
    expect(projection.received).toEqual(['a@1']);
    expect(await relay.status()).toMatchObject({ pending: 0 });
  });

  it("with the relay on: the module's relay delivers a write's events without being asked", async () => {
    const app = await start(uniqueName('outbox_module'), { pollIntervalMs: 20 });
    apps.push(app);
    const counters = app.get<IRepository<string, Counter>>(getRepositoryToken(Counter));
    const counter = new Counter('b', 'y');
    await counters.insert(counter);
    counter.increment();
    await counters.update(counter);
    const projection = app.get(Projection);
    const relay = app.get(OutboxRelay);
    // The relay counts an event once the store acked it, after the handler ran.
    await waitFor('the relay to deliver both events', () => relay.counters.delivered >= 2);
    expect(projection.received).toEqual(['b@1', 'b@2']);
    expect(relay.counters.delivered).toBe(2);
  });

  it('a relay started in a fresh application (no request made) delivers the events left pending by an earlier one', async () => {
    const dbName = uniqueName('outbox_module');
    const writer = await start(dbName, { relay: false });
    const counter = new Counter('c', 'z');
    const counters = writer.get<IRepository<string, Counter>>(getRepositoryToken(Counter));
    await counters.insert(counter);
    counter.increment();
    await counters.update(counter);
    await writer.close();

    const relaying = await start(dbName, { pollIntervalMs: 20 });
    apps.push(relaying);
    const projection = relaying.get(Projection);
    await waitFor('the fresh relay to deliver the pending events', () => projection.received.length >= 2);
    expect(projection.received).toEqual(['c@1', 'c@2']);
    const raw = await mongoose.createConnection(mongoUri(), { dbName }).asPromise();
    try {
      const stored = await raw.db!.collection('counters').findOne({ _id: 'c' as never });
      expect(stored).toMatchObject({ label: 'z', count: 1, version: 2 });
      expect(Object.keys((stored?._outbox as object | undefined) ?? {})).toEqual([]);
    } finally {
      await raw.close();
    }
  });

  it("the relay has stopped before the application's own onApplicationShutdown hooks run (a connection they close is still open for its release)", async () => {
    const seen: string[] = [];
    let stopped = false;
    @Injectable()
    class ClosesItsConnection implements OnApplicationShutdown {
      onApplicationShutdown(): void {
        seen.push(stopped ? 'relay stopped' : 'relay still running');
      }
    }
    const app = await start(uniqueName('outbox_module'), { pollIntervalMs: 20 }, [ClosesItsConnection]);
    const relay = app.get(OutboxRelay);
    const stop = relay.stop.bind(relay);
    jest.spyOn(relay, 'stop').mockImplementation(() => stop().then(() => void (stopped = true)));
    await app.close();
    expect(seen).toEqual(['relay stopped']);
  });
});
