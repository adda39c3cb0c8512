// NatsJetStreamPublisher against a real NATS JetStream server (test/support resolves it:
// NATS_URL, the machine's 127.0.0.1:4222, or a nats-server -js started for the run).
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { jetstream, jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import mongoose from 'mongoose';
import { DataSyncEvent } from '@ddd-kit/repository';
import { MongoOutboxStore, OutboxRelay } from '@ddd-kit/repository/outbox';
import { NatsJetStreamPublisher, NatsPublishError } from '@ddd-kit/repository/nats';
import { mongoLabel, mongoUri, natsUrl, uniqueName } from '../support/servers.js';
import { Counter, CounterMongooseRepository } from './support/counter.aggregate.js';
import { proxyUrl } from '../support/fault-proxy/index.js';
import { waitFor } from '../support/wait.js';

type IdentifiedDataSyncEvent = DataSyncEvent;
const identified = (eventId: string, id: string, version: number): DataSyncEvent => ({
  ...DataSyncEvent.upsert('counter', id, version, { id, count: version }),
  eventId,
});

describe('NatsJetStreamPublisher on NATS JetStream', () => {
  let nc: NatsConnection;
  let jsm: JetStreamManager;
  let stream: string;

  beforeAll(async () => {
    nc = await connect({ servers: natsUrl() });
    jsm = await jetstreamManager(nc);
    stream = uniqueName('natspub');
    // The stream captures every subject under its own prefix; duplicates are dropped for 2 minutes.
    await jsm.streams.add({ name: stream, subjects: [`${stream}.>`], duplicate_window: 120 * 1e9 });
  });

  afterAll(async () => {
    await jsm?.streams.delete(stream).catch(() => undefined);
    await nc?.close();
  });

  const messages = async (): Promise<number> => (await jsm.streams.info(stream)).state.messages;

  it('publishes an event to <prefix>.<aggregate>.<type> with Nats-Msg-Id = eventId and the event as JSON', async () => {
    const publisher = new NatsJetStreamPublisher({ jetstream: jetstream(nc), subject: stream, expectStream: stream });
    const event = identified(uniqueName('ev'), 'c-1', 1);
    const result = await publisher.publish(event);
    expect(result).toMatchObject({
      eventId: event.eventId,
      subject: `${stream}.counter.UPSERT`,
      stream,
      duplicate: false,
    });
    const stored = await jsm.streams.getMessage(stream, { seq: result.seq });
    expect(stored!.subject).toBe(`${stream}.counter.UPSERT`);
    expect(stored!.header.get('Nats-Msg-Id')).toBe(event.eventId);
    expect(stored!.json()).toEqual(JSON.parse(JSON.stringify(event)));
  });

  it('a resend of the same eventId is de-duplicated by the stream; another eventId is stored', async () => {
    const publisher = new NatsJetStreamPublisher({ jetstream: jetstream(nc), subject: stream });
    const before = await messages();
    const event = identified(uniqueName('ev'), 'c-2', 1);
    const first = await publisher.publish(event);
    const again = await publisher.publish(event);
    expect(first.duplicate).toBe(false);
    expect(again).toMatchObject({ duplicate: true, seq: first.seq });
    expect(await messages()).toBe(before + 1);
    const next = await publisher.publish(identified(uniqueName('ev'), 'c-2', 2));
    expect(next.duplicate).toBe(false);
    expect(await messages()).toBe(before + 2);
  });

  it('publishAll sends in the given order and is usable as a data-sync handler', async () => {
    const publisher = new NatsJetStreamPublisher({ jetstream: jetstream(nc), subject: stream });
    const events = [1, 2, 3].map((v) => identified(uniqueName('ev'), 'c-3', v));
    const results = await publisher.handler(events);
    expect(results.map((r) => r.duplicate)).toEqual([false, false, false]);
    const versions = [];
    for (const r of results)
      versions.push((await jsm.streams.getMessage(stream, { seq: r.seq }))!.json<{ version: number }>().version);
    expect(versions).toEqual([1, 2, 3]);
    expect(results[0].seq < results[1].seq && results[1].seq < results[2].seq).toBe(true);
  });

  it('refuses, publishing nothing, an event without eventId, a subject NATS refuses, or an event that does not serialize', async () => {
    const publisher = new NatsJetStreamPublisher({ jetstream: jetstream(nc), subject: stream });
    const before = await messages();
    const { eventId: _dropped, ...plain } = DataSyncEvent.upsert('counter', 'c-4', 1, {});
    await expect(publisher.publish(plain as DataSyncEvent)).rejects.toThrow(NatsPublishError);
    await expect(publisher.publish({ ...identified('', 'c-4', 1) })).rejects.toThrow(/without an eventId/);
    await expect(
      publisher.publish({
        ...identified(uniqueName('ev'), 'c-4', 1),
        aggregate: 'two words',
      } as IdentifiedDataSyncEvent),
    ).rejects.toThrow(/not a NATS subject/);
    await expect(
      publisher.publish({ ...identified(uniqueName('ev'), 'c-4', 1), aggregate: '>' } as IdentifiedDataSyncEvent),
    ).rejects.toThrow(/not a NATS subject/);
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    await expect(
      publisher.publish({
        ...DataSyncEvent.upsert('counter', 'c-4', 1, cyclic),
        eventId: uniqueName('ev'),
      } as IdentifiedDataSyncEvent),
    ).rejects.toThrow(/could not be serialized/);
    // One bad event in a batch: nothing of the batch is sent.
    await expect(
      publisher.publishAll([identified(uniqueName('ev'), 'c-4', 1), plain as DataSyncEvent]),
    ).rejects.toThrow(NatsPublishError);
    expect(await messages()).toBe(before);
    expect(() => new NatsJetStreamPublisher({ jetstream: jetstream(nc), subject: 'a b' })).toThrow(
      /not a NATS subject/,
    );
    expect(() => new NatsJetStreamPublisher({ jetstream: jetstream(nc), timeoutMs: 0 })).toThrow(/timeoutMs/);
    expect(() => new NatsJetStreamPublisher({} as never)).toThrow(/jetstream/);
  });

  it('a publish to a subject no stream captures fails (the relay keeps the event pending)', async () => {
    const publisher = new NatsJetStreamPublisher({
      jetstream: jetstream(nc),
      subject: uniqueName('nostream'),
      timeoutMs: 2000,
    });
    await expect(publisher.publish(identified(uniqueName('ev'), 'c-5', 1))).rejects.toThrow();
  });

  it('fault: the acknowledgement is lost after the stream stored the message, the connection cut; the resend adds no duplicate', async () => {
    const proxied = await proxyUrl('nats', natsUrl());
    const viaProxy = await connect({ servers: proxied.url, reconnectTimeWait: 50, timeout: 5000 });
    try {
      const publisher = new NatsJetStreamPublisher({ jetstream: jetstream(viaProxy), subject: stream });
      // The acknowledgement never comes: how long the publisher waits for it decides nothing but the wait.
      const firstTry = new NatsJetStreamPublisher({ jetstream: jetstream(viaProxy), subject: stream, timeoutMs: 200 });
      const before = await messages();
      const event = identified(uniqueName('ev'), 'c-6', 1);
      const fault = proxied.proxy.dropReply({
        match: (r) => r.command === 'HPUB' && r.args[0] === `${stream}.counter.UPSERT`,
        then: 'cut',
      });
      // The publisher cannot know whether the stream stored the event: it rejects.
      await expect(firstTry.publish(event)).rejects.toThrow();
      await fault.fired;
      expect(proxied.proxy.stats['drop-reply-cut']).toBe(1);
      // The server did act: the message is in the stream.
      expect(await messages()).toBe(before + 1);
      // The relay resends (a new connection after the cut): the stream drops the copy.
      const resent = await publisher.publish(event);
      expect(resent.duplicate).toBe(true);
      expect(await messages()).toBe(before + 1);
    } finally {
      await viaProxy.close().catch(() => undefined);
      await proxied.proxy.close();
    }
  });

  it('fault: the publish reaches the stream twice (a lost reply, a resend by the network path); one message is stored', async () => {
    const proxied = await proxyUrl('nats', natsUrl());
    const viaProxy = await connect({ servers: proxied.url });
    try {
      const publisher = new NatsJetStreamPublisher({ jetstream: jetstream(viaProxy), subject: stream });
      const before = await messages();
      const fault = proxied.proxy.duplicateRequest({ match: 'HPUB' });
      const result = await publisher.publish(identified(uniqueName('ev'), 'c-7', 1));
      await fault.fired;
      // The client sees the second answer: the stream had it already.
      expect(result.duplicate).toBe(true);
      expect(await messages()).toBe(before + 1);
    } finally {
      await viaProxy.close().catch(() => undefined);
      await proxied.proxy.close();
    }
  });

  it(`as OutboxRelay's destination, from a MongoOutboxStore on ${mongoLabel()}: every written event reaches the stream once, a lost acknowledgement included`, async () => {
    const connection = await mongoose.createConnection(mongoUri(), { dbName: uniqueName('outbox_nats') }).asPromise();
    const proxied = await proxyUrl('nats', natsUrl());
    const viaProxy = await connect({ servers: proxied.url, reconnectTimeWait: 50 });
    try {
      const store = new MongoOutboxStore();
      const repository = new CounterMongooseRepository({
        connection,
        collection: 'counters',
        aggregate: Counter,
        outbox: store,
      });
      // The lost acknowledgement costs the relay this wait; a slow answer to another publish
      // only makes it one more retry, which the stream de-duplicates like the lost one.
      const publisher = new NatsJetStreamPublisher({
        jetstream: jetstream(viaProxy),
        subject: stream,
        timeoutMs: 500,
      });
      const relay = new OutboxRelay({
        stores: [store],
        deliver: publisher.deliver,
        autoStart: false,
        backoff: { initialMs: 1, maxMs: 1 },
      });
      const before = await messages();
      const ids = ['n1', 'n2', 'n3'];
      for (const id of ids) {
        const counter = new Counter(id, id);
        await repository.insert(counter);
        counter.increment();
        await repository.update(counter);
      }
      // The stream stores the second event, its acknowledgement is lost: the relay retries it.
      const fault = proxied.proxy.dropReply({ match: 'HPUB', nth: 2, then: 'cut' });
      await waitFor('the relay to deliver every event', async () => {
        await relay.runOnce();
        return (await store.status(Date.now())).pending === 0;
      });
      await fault.fired;
      expect(await store.status(Date.now())).toEqual({
        pending: 0,
        oldestPendingAgeMs: null,
        deadLetters: 0,
        oldestDeadLetterAgeMs: null,
      });
      expect(relay.counters.failed).toBeGreaterThanOrEqual(1);
      // Six events written, six messages: the retried one was dropped by the stream as a duplicate.
      expect(await messages()).toBe(before + ids.length * 2);
      await relay.stop();
    } finally {
      await viaProxy.close().catch(() => undefined);
      await proxied.proxy.close();
      await connection.close();
    }
  });
});
