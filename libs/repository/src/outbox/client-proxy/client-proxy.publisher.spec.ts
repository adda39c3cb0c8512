// ClientProxyPublisher against a client whose Observables the test controls: when a publish
// counts as done, what it sends for each transport, and what it refuses. The transports
// themselves: test/repository/client-proxy.*.spec.ts.
import { describe, expect, it } from '@jest/globals';
import { ClientKafka, ClientMqtt, ClientRMQ, MqttRecord, RmqRecord } from '@nestjs/microservices';
import { KafkaRequestSerializer } from '@nestjs/microservices/serializers/kafka-request.serializer.js';
import { NEVER, type Observable, Subject, of, throwError } from 'rxjs';
import { DataSyncEvent } from '../../data-sync/data-sync-event.js';
import { RepositoryConfigurationError } from '../../errors.js';
import { InMemoryOutboxStore } from '../../backends/memory/in-memory-outbox.store.js';
import { InMemoryRepository } from '../../backends/memory/in-memory.repository.js';
import { Counter } from '../../testing/counter.aggregate.js';
import { OutboxRelay } from '../outbox-relay.js';
import { ClientProxyPublishError, ClientProxyPublisher, orderingKey, transportRecord } from './index.js';

type Call = { via: 'emit' | 'send'; pattern: unknown; data: unknown };

/** A client answering each call with the next of `answers` (default: completes at once). */
function fakeClient(answers: Array<() => Observable<unknown>> = []) {
  const calls: Call[] = [];
  const next = () => (answers.shift() ?? (() => of(undefined)))();
  return {
    calls,
    emit: (pattern: unknown, data: unknown) => (calls.push({ via: 'emit', pattern, data }), next()),
    send: (pattern: unknown, data: unknown) => (calls.push({ via: 'send', pattern, data }), next()),
  };
}

const event = (id: string, version: number) => DataSyncEvent.upsert('counter', id, version, { id, count: version });

describe('ClientProxyPublisher', () => {
  it('emits the event under <prefix>.<aggregate> and resolves once the Observable completed', async () => {
    const done = new Subject<unknown>();
    const client = fakeClient([() => done]);
    const publisher = new ClientProxyPublisher({ client: client as never });
    const e = event('c-1', 1);
    let settled = false;
    const publishing = publisher.publish(e).then(() => (settled = true));
    await Promise.resolve();
    expect(client.calls).toEqual([{ via: 'emit', pattern: 'ddd-kit.counter', data: e }]);
    expect(settled).toBe(false);
    done.complete();
    await publishing;
    expect(settled).toBe(true);
  });

  it("rejects when the emit's Observable errors, and when it does not complete within timeoutMs", async () => {
    const client = fakeClient([() => throwError(() => new Error('broker refused')), () => NEVER]);
    const publisher = new ClientProxyPublisher({ client: client as never, timeoutMs: 20 });
    await expect(publisher.publish(event('c-2', 1))).rejects.toThrow(ClientProxyPublishError);
    await expect(publisher.publish(event('c-2', 1))).rejects.toThrow(/not accepted by the transport within 20 ms/);
  });

  it("mode 'send' waits for the consumer's answer; its error rejects", async () => {
    const client = fakeClient([() => of('ok'), () => throwError(() => new Error('handler failed'))]);
    const publisher = new ClientProxyPublisher({ client: client as never, mode: 'send', pattern: 'app' });
    await publisher.publish(event('c-3', 1));
    await expect(publisher.publish(event('c-3', 2))).rejects.toThrow(/handler failed/);
    expect(client.calls.map((c) => [c.via, c.pattern])).toEqual([
      ['send', 'app.counter'],
      ['send', 'app.counter'],
    ]);
  });

  it('publishAll sends in order and stops at the first failure', async () => {
    const client = fakeClient([() => of(undefined), () => throwError(() => new Error('down'))]);
    const publisher = new ClientProxyPublisher({ client: client as never, pattern: (e) => `p.${String(e.id)}` });
    const events = [1, 2, 3].map((v) => event('c-4', v));
    await expect(publisher.handler(events)).rejects.toThrow(/down/);
    expect(client.calls.map((c) => (c.data as DataSyncEvent).version)).toEqual([1, 2]);
    expect(client.calls[0].pattern).toBe('p.c-4');
  });

  it('refuses, sending nothing, an event without eventId, with an empty pattern or whose record fails; refuses bad options', async () => {
    const client = fakeClient();
    const publisher = new ClientProxyPublisher({ client: client as never });
    const { eventId: _dropped, ...plain } = event('c-5', 1);
    await expect(publisher.publishAll([event('c-5', 1), plain as DataSyncEvent])).rejects.toThrow(/without an eventId/);
    await expect(
      new ClientProxyPublisher({ client: client as never, pattern: () => '' }).publish(event('c-5', 1)),
    ).rejects.toThrow(/not a non-empty string/);
    const unmade = new ClientProxyPublisher({
      client: client as never,
      record: () => {
        throw new Error('no room for it');
      },
    });
    await expect(unmade.publish(event('c-5', 1))).rejects.toThrow(/could not be made a message: Error: no room for it/);
    expect(client.calls).toEqual([]);
    expect(() => new ClientProxyPublisher({} as never)).toThrow(RepositoryConfigurationError);
    expect(() => new ClientProxyPublisher({ client: client as never, pattern: '' })).toThrow(/prefix/);
    expect(() => new ClientProxyPublisher({ client: client as never, mode: 'publish' as never })).toThrow(/mode/);
    expect(() => new ClientProxyPublisher({ client: client as never, timeoutMs: 0 })).toThrow(/timeoutMs/);
  });

  it("carries the event id as the transport's message id, and the instance as Kafka's key", () => {
    const e = event('c-6', 3);
    const rmq = transportRecord(new ClientRMQ({ urls: ['amqp://127.0.0.1:1'], queue: 'q' }), e);
    expect(rmq).toBeInstanceOf(RmqRecord);
    expect((rmq as RmqRecord).options).toEqual({ messageId: e.eventId, persistent: true });
    // Their drivers (kafkajs, mqtt) are not installed here: the records only need the class.
    const kafka = transportRecord(Object.create(ClientKafka.prototype) as object, e);
    expect(new KafkaRequestSerializer().serialize(kafka)).toEqual({
      key: 'counter:c-6',
      value: JSON.stringify(e),
      headers: { 'message-id': e.eventId },
    });
    expect(orderingKey(DataSyncEvent.purge('counter', 7, 2))).toBe('counter:7');
    const mqtt = transportRecord(Object.create(ClientMqtt.prototype) as object, e);
    expect(mqtt).toBeInstanceOf(MqttRecord);
    expect((mqtt as MqttRecord).options).toEqual({ qos: 1 });
    expect(transportRecord({}, e)).toBe(e);
  });

  it("as OutboxRelay's destination: a failed emit leaves the event pending, the retry delivers and acks it", async () => {
    let now = Date.now() + 60_000;
    const store = new InMemoryOutboxStore();
    const repository = new InMemoryRepository<string, Counter>({ aggregate: Counter, outbox: store });
    const client = fakeClient([() => throwError(() => new Error('connection lost'))]);
    const relay = new OutboxRelay({
      stores: [store],
      deliver: new ClientProxyPublisher({ client: client as never }).deliver,
      clock: () => now,
      autoStart: false,
      backoff: { initialMs: 1000, maxMs: 1000 },
    });
    await repository.insert(new Counter('c-7', 'seven'));
    await relay.runOnce();
    expect((await store.status(now)).pending).toBe(1);
    now += 1000;
    await relay.runOnce();
    expect(await store.status(now)).toEqual({
      pending: 0,
      oldestPendingAgeMs: null,
      deadLetters: 0,
      oldestDeadLetterAgeMs: null,
    });
    expect(client.calls.map((c) => (c.data as DataSyncEvent).eventId)).toEqual([
      (client.calls[0].data as DataSyncEvent).eventId,
      (client.calls[0].data as DataSyncEvent).eventId,
    ]);
    await relay.stop();
  });
});
