// What the ClientProxyPublisher suites share: a consumer microservice whose handler runs each
// event through the inbox of @ddd-kit/idempotency, and a repository whose writes fill an outbox.
import { Controller, Module, type Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Ctx, EventPattern, MessagePattern, Payload, type MicroserviceOptions } from '@nestjs/microservices';
import { inbox, MemoryIdempotencyStore } from '@ddd-kit/idempotency';
import { InMemoryRepository, type DataSyncEvent } from '@ddd-kit/repository';
import { InMemoryOutboxStore, OutboxRelay, type OutboxDelivery } from '@ddd-kit/repository/outbox';
import { Counter } from './counter.aggregate.js';

/** What the consumer saw: every delivery, and the effects the inbox let through (once per event). */
export class Consumer {
  readonly store = new MemoryIdempotencyStore();
  readonly deliveries: Array<{ eventId: string; replayed: boolean }> = [];
  readonly effects: DataSyncEvent[] = [];

  /** The handler's body: the effect (recording the event) runs once per event id. */
  async consume(event: DataSyncEvent): Promise<'handled' | 'replayed'> {
    const { replayed } = await inbox(this.store, event.eventId, async () => void this.effects.push(event), {
      consumer: 'read-model',
    });
    this.deliveries.push({ eventId: event.eventId, replayed });
    return replayed ? 'replayed' : 'handled';
  }

  /** The versions of one instance, in the order their effects ran. */
  versionsOf(id: string): number[] {
    return this.effects.filter((event) => event.id === id).map((event) => event.version);
  }

  outcomesOf(eventId: string): boolean[] {
    return this.deliveries.filter((d) => d.eventId === eventId).map((d) => d.replayed);
  }
}

/**
 * A module whose one controller handles `pattern` with `handle`: as an `@EventPattern` (an
 * emitted event) or a `@MessagePattern` (a request the publisher waits on: its answer is the ack).
 */
export function consumerModule(
  pattern: string,
  kind: 'event' | 'message',
  handle: (event: DataSyncEvent, context: unknown) => Promise<unknown>,
): Type {
  const route = kind === 'event' ? EventPattern<string>(pattern) : MessagePattern<string>(pattern);
  @Controller()
  class ConsumerController {
    @route
    on(@Payload() event: DataSyncEvent, @Ctx() context: unknown): Promise<unknown> {
      return handle(event, context);
    }
  }
  @Module({ controllers: [ConsumerController] })
  class ConsumerModule {}
  return ConsumerModule;
}

/** Starts a consumer microservice; resolves once it listens. */
export async function startConsumer(module: Type, options: MicroserviceOptions): Promise<{ close(): Promise<void> }> {
  const app = await NestFactory.createMicroservice<MicroserviceOptions>(module, { ...options, logger: false });
  await app.listen();
  return app;
}

/**
 * Counters in memory with an outbox, and a relay over it to `deliver` on a clock the test moves
 * (`advance` passes a retry's backoff without waiting for it).
 */
export function outboxOf(deliver: OutboxDelivery) {
  let now = Date.now() + 60_000;
  const store = new InMemoryOutboxStore();
  const repository = new InMemoryRepository<string, Counter>({ aggregate: Counter, outbox: store });
  const relay = new OutboxRelay({
    stores: [store],
    deliver,
    clock: () => now,
    autoStart: false,
    backoff: { initialMs: 1_000, maxMs: 1_000 },
  });
  return {
    store,
    repository,
    relay,
    advance: (ms = 1_000) => void (now += ms),
    pending: async () => (await store.status(now)).pending,
    /** Each id inserted, then incremented `updates` times: versions 1…updates+1, writes interleaved across ids. */
    write: async (ids: string[], updates: number) => {
      const counters = ids.map((id) => new Counter(id, id));
      for (const counter of counters) await repository.insert(counter);
      for (let i = 0; i < updates; i++) {
        for (const counter of counters) {
          const loaded = (await repository.findById(counter.id))!;
          loaded.increment();
          await repository.update(loaded);
        }
      }
    },
  };
}
