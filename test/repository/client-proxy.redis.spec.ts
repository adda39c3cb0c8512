// ClientProxyPublisher through Nest's Redis transport (pub/sub), each case on channels of its
// own: the run's shared Redis, or a redis-server of the case's own where it stops the server.
// Redis keeps no message: one published while no consumer is subscribed is gone, and the PUBLISH
// still succeeds. So at least once needs mode 'send': the consumer's answer is the acknowledgement.
import { afterAll, describe, expect, it } from '@jest/globals';
import { ClientProxyFactory, Transport, type ClientProxy } from '@nestjs/microservices';
import { Redis } from 'ioredis';
import { DataSyncEvent } from '@ddd-kit/repository';
import { ClientProxyPublisher } from '@ddd-kit/repository/client-proxy';
import { startRedisServer } from '../support/server-provider.js';
import { redisUrl, uniqueName } from '../support/servers.js';
import { waitFor } from '../support/wait.js';
import { Consumer, consumerModule, outboxOf, startConsumer } from './support/client-proxy.support.js';

const closing: Array<() => Promise<unknown>> = [];

afterAll(async () => {
  for (const close of closing.reverse()) await close().catch(() => undefined);
});

/** Reconnects quickly after an outage (without retryAttempts, Nest's Redis client and server give up at once). */
const reconnect = { retryAttempts: 10_000, retryDelay: 50 };

function hostPort(url: string) {
  const { hostname, port } = new URL(url);
  return { host: hostname, port: Number(port || 6379) };
}

function client(url = redisUrl()): ClientProxy {
  const proxy = ClientProxyFactory.create({ transport: Transport.REDIS, options: { ...hostPort(url), ...reconnect } });
  closing.push(() => proxy.close());
  return proxy;
}

/** A consumer answering each request (`@MessagePattern`) once its inbox recorded the event. */
async function consumer(prefix: string, url = redisUrl()) {
  const consumed = new Consumer();
  const channel = `${prefix}.Counter`;
  const module = consumerModule(channel, 'message', (event) => consumed.consume(event));
  const app = await startConsumer(module, { transport: Transport.REDIS, options: { ...hostPort(url), ...reconnect } });
  closing.push(() => app.close());
  // The server subscribes after `listen` resolved: a message published before is lost.
  const redis = new Redis(url);
  try {
    await waitFor(`the consumer to subscribe to ${channel}`, async () => {
      const [, subscribers] = (await redis.pubsub('NUMSUB', channel)) as [string, number];
      return subscribers > 0;
    });
  } finally {
    redis.disconnect();
  }
  return consumed;
}

describe('ClientProxyPublisher through the Redis transport', () => {
  it("mode 'send': every write at least once, in version order per aggregate; a second copy of an event is recognised by the inbox", async () => {
    const prefix = uniqueName('redis_outbox');
    const consumed = await consumer(prefix);
    const publisher = new ClientProxyPublisher({ client: client(), pattern: prefix, mode: 'send' });
    const outbox = outboxOf(publisher.deliver);
    const ids = ['d1', 'd2', 'd3'];
    await outbox.write(ids, 3);
    await outbox.relay.drain();
    // Each publish waited for the consumer's answer: everything acked has been handled.
    expect(await outbox.pending()).toBe(0);
    for (const id of ids) expect(consumed.versionsOf(id)).toEqual([1, 2, 3, 4]);

    const again = consumed.effects[0];
    await publisher.publish(again);
    await publisher.publish(again);
    expect(consumed.outcomesOf(again.eventId)).toEqual([false, true, true]);
    expect(consumed.effects).toHaveLength(12);
  });

  it("mode 'emit' is accepted by Redis with no consumer subscribed, and the message is gone", async () => {
    const prefix = uniqueName('redis_outbox');
    const publisher = new ClientProxyPublisher({ client: client(), pattern: prefix });
    const event = DataSyncEvent.upsert('Counter', 'd4', 1, {});
    await publisher.publish(event); // resolves: the relay would ack it
    const consumed = await consumer(prefix);
    await publisher.publish(DataSyncEvent.upsert('Counter', 'd4', 2, {}));
    await waitFor('the consumer to get the second version', () => consumed.effects.length === 1);
    expect(consumed.versionsOf('d4')).toEqual([2]);
  });

  it("mode 'send' with no consumer subscribed: the publish times out, the event stays pending, and reaches the consumer once it is up", async () => {
    const prefix = uniqueName('redis_outbox');
    const publisher = new ClientProxyPublisher({ client: client(), pattern: prefix, mode: 'send', timeoutMs: 200 });
    const outbox = outboxOf(publisher.deliver);
    await outbox.write(['d5'], 1);
    await outbox.relay.runOnce();
    expect(outbox.relay.counters).toMatchObject({ delivered: 0, failed: 1 });
    expect(await outbox.pending()).toBe(2);

    const consumed = await consumer(prefix);
    await waitFor('the relay to deliver both versions', async () => {
      outbox.advance();
      await outbox.relay.runOnce();
      return (await outbox.pending()) === 0;
    });
    expect(consumed.versionsOf('d5')).toEqual([1, 2]);
  });

  it('Redis down: the publish fails, the event stays pending; after the restart it is delivered, in order, once', async () => {
    const server = await startRedisServer();
    closing.push(() => server.stop());
    const prefix = uniqueName('redis_outbox');
    const consumed = await consumer(prefix, server.url);
    const publisher = new ClientProxyPublisher({ client: client(server.url), pattern: prefix, mode: 'send' });
    const outbox = outboxOf(publisher.deliver);
    await outbox.write(['d6'], 0);
    await outbox.relay.drain();
    expect(consumed.versionsOf('d6')).toEqual([1]);

    await server.kill();
    const loaded = (await outbox.repository.findById('d6'))!;
    loaded.increment();
    await outbox.repository.update(loaded);
    await outbox.relay.runOnce();
    expect(outbox.relay.counters.failed).toBe(1);
    expect(await outbox.pending()).toBe(1);

    await server.start();
    await waitFor('the relay to deliver after the restart', async () => {
      outbox.advance();
      await outbox.relay.runOnce();
      return (await outbox.pending()) === 0;
    });
    expect(consumed.versionsOf('d6')).toEqual([1, 2]);
  });
});
