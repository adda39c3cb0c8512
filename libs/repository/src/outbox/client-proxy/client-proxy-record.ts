import { ClientKafka, ClientMqtt, ClientRMQ, MqttRecord, RmqRecord } from '@nestjs/microservices';
import type { DataSyncEvent } from '../../data-sync/data-sync-event.js';

/** The ordering key of an event: its instance (aggregate name and id). */
export function orderingKey(event: DataSyncEvent): string {
  return `${event.aggregate}:${String(event.id)}`;
}

/**
 * The message a Nest client sends for an event, with what its transport can carry:
 * - ClientRMQ: the AMQP `messageId` is the event id, and the message is persistent (Nest's
 *   default is not: a broker restart would drop it from a durable queue).
 * - ClientKafka: the message key is the instance (one partition per instance: its order), the
 *   `message-id` header the event id.
 * - ClientMqtt: QoS 1, so the publish completes on the broker's PUBACK (QoS 0 on the write).
 * - Any other client (Redis, NATS core, TCP): the event itself, which carries its `eventId`.
 */
export function transportRecord(client: object, event: DataSyncEvent): unknown {
  if (client instanceof ClientRMQ) return new RmqRecord(event, { messageId: event.eventId, persistent: true });
  if (client instanceof ClientKafka)
    return { key: orderingKey(event), value: event, headers: { 'message-id': event.eventId } };
  if (client instanceof ClientMqtt) return new MqttRecord(event, { qos: 1 });
  return event;
}
