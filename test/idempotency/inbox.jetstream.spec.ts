// The inbox against a real NATS JetStream server: an event published by NatsJetStreamPublisher
// (Nats-Msg-Id = eventId) and delivered again — after its handler had its effect, the
// acknowledgement never made it — has no second effect. On PostgreSQL the effect and the record
// are one transaction.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { AckPolicy, jetstream, jetstreamManager, type JetStreamManager, type JsMsg } from '@nats-io/jetstream';
import pg from 'pg';
import { queryableFor } from '@ddd-kit/core/postgres';
import {
  handleJetStreamMessage,
  inbox,
  MemoryIdempotencyStore,
  PostgresIdempotencyStore,
  type IdempotencyStore,
} from '@ddd-kit/idempotency';
import { DataSyncEvent } from '@ddd-kit/repository';
import { NatsJetStreamPublisher } from '@ddd-kit/repository/nats';
import { natsUrl, postgresSchema, uniqueName } from '../support/servers.js';

describe('the inbox on NATS JetStream deliveries', () => {
  let nc: NatsConnection;
  let jsm: JetStreamManager;
  let stream: string;
  let schema: Awaited<ReturnType<typeof postgresSchema>>;
  let pool: pg.Pool;

  beforeAll(async () => {
    nc = await connect({ servers: natsUrl() });
    jsm = await jetstreamManager(nc);
    stream = uniqueName('inbox');
    await jsm.streams.add({ name: stream, subjects: [`${stream}.>`] });
    schema = await postgresSchema('idem_inbox');
    pool = new pg.Pool({ connectionString: schema.url, max: 4 });
    await pool.query('CREATE TABLE mails (event_id text NOT NULL, sent_to text NOT NULL)');
  });

  afterAll(async () => {
    await jsm?.streams.delete(stream).catch(() => undefined);
    await nc?.close();
    await pool?.end();
    await schema?.drop();
  });

  /** Publishes one event and returns a function that takes its next delivery. */
  async function publishAndConsume(): Promise<{ event: DataSyncEvent; next: () => Promise<JsMsg> }> {
    const event = DataSyncEvent.upsert('user', uniqueName('u'), 1, { username: 'alice' });
    // A subject of its own, so this consumer sees this event only.
    const subject = `${stream}.${uniqueName('t')}`;
    await new NatsJetStreamPublisher({ jetstream: jetstream(nc), subject }).publish(event);
    const durable = uniqueName('c');
    await jsm.consumers.add(stream, {
      durable_name: durable,
      ack_policy: AckPolicy.Explicit,
      filter_subject: `${subject}.>`,
    });
    const consumer = await jetstream(nc).consumers.get(stream, durable);
    return {
      event,
      next: async () => {
        const message = await consumer.next({ expires: 20_000 });
        if (message === null) throw new Error('no delivery came');
        return message;
      },
    };
  }

  /** The effect: a mail sent, a row in `mails` (through the transaction of the run, when there is one). */
  const sendMail = (eventId: string) => async () => {
    await queryableFor(pool, 'mail sender').query('INSERT INTO mails (event_id, sent_to) VALUES ($1, $2)', [
      eventId,
      'alice',
    ]);
  };
  const mailsFor = async (eventId: string) =>
    Number((await pool.query('SELECT count(*)::int AS n FROM mails WHERE event_id = $1', [eventId])).rows[0].n);

  it.each([
    ['memory', () => new MemoryIdempotencyStore()],
    ['PostgreSQL', () => new PostgresIdempotencyStore(pool, { sweepIntervalMs: 0 })],
  ] as Array<[string, () => IdempotencyStore]>)(
    'a redelivered message has no second effect (%s)',
    async (_label, makeStore) => {
      const store = makeStore();
      const { event, next } = await publishAndConsume();
      const first = await next();
      expect(first.headers?.get('Nats-Msg-Id')).toBe(event.eventId);
      // The handler had its effect; the acknowledgement is lost (here: the message is put back).
      await inbox(store, event.eventId, sendMail(event.eventId), { consumer: 'welcome' });
      first.nak();

      const again = await next();
      expect(again.redelivered).toBe(true);
      expect(await handleJetStreamMessage(store, again, sendMail(event.eventId), { consumer: 'welcome' })).toBe(
        'replayed',
      );
      expect(await mailsFor(event.eventId)).toBe(1);
      // Another consumer of the same event runs its own handler once.
      expect(await inbox(store, event.eventId, async () => 'read model', { consumer: 'read-model' })).toEqual({
        result: 'read model',
        replayed: false,
      });
    },
  );

  it('on PostgreSQL, a handler that fails after its effect rolls both back: the redelivery runs it', async () => {
    const store = new PostgresIdempotencyStore(pool, { sweepIntervalMs: 0 });
    const { event, next } = await publishAndConsume();
    const first = await next();
    await expect(
      handleJetStreamMessage(
        store,
        first,
        async () => {
          await sendMail(event.eventId)();
          throw new Error('crashed after sending');
        },
        { consumer: 'welcome' },
      ),
    ).rejects.toThrow('crashed after sending');
    expect(await mailsFor(event.eventId)).toBe(0);
    const again = await next();
    expect(await handleJetStreamMessage(store, again, sendMail(event.eventId), { consumer: 'welcome' })).toBe(
      'handled',
    );
    expect(await mailsFor(event.eventId)).toBe(1);
  });
});
