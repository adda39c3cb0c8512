// ClientProxyPublisher through Nest's RMQ transport, against a real RabbitMQ (RABBITMQ_URL, else
// the machine's own on 127.0.0.1:5672), each case on a queue of its own: outbox writes reach a
// consumer microservice at least once, in order per aggregate, each once after its inbox; a
// publish the broker refuses or cannot take stays pending and is delivered later.
import { afterAll, describe, expect, it } from '@jest/globals';
import amqp from 'amqplib';
import { ClientProxyFactory, Transport, type ClientProxy, type RmqContext } from '@nestjs/microservices';
import { ClientProxyPublisher } from '@ddd-kit/repository/client-proxy';
import { freePort } from '../support/server-provider.js';
import { rabbitMqUrl, uniqueName } from '../support/servers.js';
import { waitFor } from '../support/wait.js';
import { Consumer, consumerModule, outboxOf, startConsumer } from './support/client-proxy.support.js';

// The default pattern, `ddd-kit.<aggregate>`: the aggregate is named after its class.
const PATTERN = 'ddd-kit.Counter';
const queues: string[] = [];
const closing: Array<() => Promise<unknown>> = [];

afterAll(async () => {
  for (const close of closing.reverse()) await close().catch(() => undefined);
  const connection = await amqp.connect(rabbitMqUrl());
  const channel = await connection.createChannel();
  for (const queue of queues) await channel.deleteQueue(queue).catch(() => undefined);
  await connection.close();
});

/** A queue of the case's own; `arguments` are its x-arguments (client and consumer declare it alike). */
function queueOf(args: Record<string, unknown> = {}) {
  const queue = uniqueName('rmq_outbox');
  queues.push(queue);
  return { queue, queueOptions: { durable: true, arguments: args } };
}

function client(options: ReturnType<typeof queueOf>, url = rabbitMqUrl()): ClientProxy {
  const proxy = ClientProxyFactory.create({ transport: Transport.RMQ, options: { urls: [url], ...options } });
  closing.push(() => proxy.close());
  return proxy;
}

/**
 * The consumer: one at a time (prefetch 1), acked by hand once the inbox recorded the event;
 * `beforeAck` may put a message back instead (a lost acknowledgement, as the broker sees it).
 */
async function consumer(options: ReturnType<typeof queueOf>, beforeAck?: (context: RmqContext) => boolean) {
  const consumed = new Consumer();
  const messageIds: string[] = [];
  const deliveryModes = new Set<number>();
  const module = consumerModule(PATTERN, 'event', async (event, ctx) => {
    const context = ctx as RmqContext;
    const message = context.getMessage() as {
      properties: { messageId: string; deliveryMode: number };
      fields: { redelivered: boolean };
    };
    messageIds.push(message.properties.messageId);
    deliveryModes.add(message.properties.deliveryMode);
    await consumed.consume(event);
    if (beforeAck?.(context) === true) context.getChannelRef().nack(message, false, true);
    else context.getChannelRef().ack(message);
  });
  const app = await startConsumer(module, {
    transport: Transport.RMQ,
    options: { urls: [rabbitMqUrl()], noAck: false, prefetchCount: 1, ...options },
  });
  closing.push(() => app.close());
  return { consumed, messageIds, deliveryModes, close: () => app.close() };
}

describe('ClientProxyPublisher through the RMQ transport', () => {
  it('delivers every write at least once, in version order per aggregate; the message id is the event id, the message persistent; the inbox lets each through once', async () => {
    const options = queueOf();
    const { consumed, messageIds, deliveryModes } = await consumer(options);
    const publisher = new ClientProxyPublisher({ client: client(options) });
    const outbox = outboxOf(publisher.deliver);
    const ids = ['r1', 'r2', 'r3'];
    await outbox.write(ids, 3);
    await outbox.relay.drain();
    expect(await outbox.pending()).toBe(0);
    await waitFor('the consumer to handle 12 events', () => consumed.effects.length >= 12 && consumed.effects);
    for (const id of ids) expect(consumed.versionsOf(id)).toEqual([1, 2, 3, 4]);
    expect(messageIds).toEqual(consumed.effects.map((event) => event.eventId));
    // Persistent (delivery mode 2): a durable queue keeps them through a broker restart.
    expect([...deliveryModes]).toEqual([2]);

    // The same event published twice (a relay retrying after a lost confirm): handled once.
    const again = consumed.effects[0];
    await publisher.publish(again);
    await publisher.publish(again);
    await waitFor('both copies to arrive', () => consumed.outcomesOf(again.eventId).length === 3);
    expect(consumed.outcomesOf(again.eventId)).toEqual([false, true, true]);
    expect(consumed.effects).toHaveLength(12);
  });

  it('a message the broker redelivers (its acknowledgement lost after the effect) has no second effect', async () => {
    const options = queueOf();
    let putBack = 0;
    const { consumed } = await consumer(options, (context) => {
      // The first delivery of the first message goes back to the queue after its effect.
      const message = context.getMessage() as { fields: { redelivered: boolean } };
      return !message.fields.redelivered && putBack++ === 0;
    });
    const outbox = outboxOf(new ClientProxyPublisher({ client: client(options) }).deliver);
    await outbox.write(['r4'], 1);
    await outbox.relay.drain();
    await waitFor('both versions and the redelivery', () => consumed.deliveries.length === 3);
    expect(consumed.deliveries.map((d) => d.replayed)).toEqual([false, true, false]);
    expect(consumed.versionsOf('r4')).toEqual([1, 2]);
  });

  it('a publish the broker refuses (a full queue nacks it) fails the delivery: the event stays pending, then is delivered in order', async () => {
    // At most one ready message; the next publish is nacked by the broker (no consumer yet).
    const options = queueOf({ 'x-max-length': 1, 'x-overflow': 'reject-publish' });
    const outbox = outboxOf(new ClientProxyPublisher({ client: client(options) }).deliver);
    await outbox.write(['r5'], 1);
    await outbox.relay.runOnce();
    expect(outbox.relay.counters).toMatchObject({ delivered: 1, failed: 1 });
    expect(await outbox.pending()).toBe(1);

    const { consumed } = await consumer(options);
    await waitFor('the consumer to take the first version', () => consumed.effects.length === 1);
    await waitFor('the relay to deliver the refused version', async () => {
      outbox.advance();
      await outbox.relay.runOnce();
      return (await outbox.pending()) === 0;
    });
    await waitFor('the consumer to take it', () => consumed.effects.length === 2);
    expect(consumed.versionsOf('r5')).toEqual([1, 2]);
  });

  it('with the broker unreachable the event stays pending, naming why; a relay that reaches it delivers it', async () => {
    const options = queueOf();
    const unreachable = `amqp://guest:guest@127.0.0.1:${await freePort()}`;
    const down = new ClientProxyPublisher({ client: client(options, unreachable) });
    const up = new ClientProxyPublisher({ client: client(options) });
    let broker = down;
    const outbox = outboxOf((aggregate, events) => broker.deliver(aggregate, events));
    await outbox.write(['r6'], 0);
    await outbox.relay.runOnce();
    expect(outbox.relay.counters.failed).toBe(1);
    expect(await outbox.pending()).toBe(1);
    const [record] = (await outbox.store.claim({ owner: 'peek', limit: 1, leaseMs: 5, now: Date.now() + 3_600_000 }))[0]
      .events;
    expect(record.lastError).toMatch(/ClientProxyPublishError.*ECONNREFUSED/);
    await outbox.store.release('peek');

    const { consumed } = await consumer(options);
    broker = up;
    outbox.advance();
    await outbox.relay.runOnce();
    expect(await outbox.pending()).toBe(0);
    await waitFor('the consumer to take it', () => consumed.effects.length === 1);
    expect(consumed.versionsOf('r6')).toEqual([1]);
  });
});
