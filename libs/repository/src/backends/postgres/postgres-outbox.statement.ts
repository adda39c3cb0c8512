import { preparedStatement } from '@ddd-kit/core/postgres';
import type { Pool } from 'pg';
import type { DataSyncEvent } from '../../data-sync/data-sync-event.js';
import { firstDueAt } from '../../outbox/outbox-arguments.js';
import { payloadOf, type Row } from './postgres-outbox.rows.js';
import type { PostgresStatement } from './postgres-repository.statements.js';

/** The values each event binds: event_id, aggregate, aggregate_id, version, payload, next_attempt_at. */
const PER_EVENT = 6;

/**
 * Where each value of an events statement sits, as `$n` numbers: the write's own values first
 * (its `$n` stay as they are), then PER_EVENT per event, the time, the notify channel when the
 * statement notifies, and the claim's owner and lease end when it claims. Only this module
 * reads or writes values by position.
 */
class EventsLayout {
  /** The parameter number of the first event's first value. */
  readonly first: number;
  /** The parameter number of the time (stored_at). */
  readonly time: number;

  constructor(
    writeValues: number,
    readonly count: number,
    readonly notify: boolean,
    readonly claim: boolean,
  ) {
    this.first = writeValues + 1;
    this.time = this.first + count * PER_EVENT;
  }

  /** The parameter number of event `i`'s first value. */
  event(i: number): number {
    return this.first + i * PER_EVENT;
  }

  get channel(): number {
    return this.time + 1;
  }

  get owner(): number {
    return this.time + (this.notify ? 2 : 1);
  }

  get leaseUntil(): number {
    return this.owner + 1;
  }

  /** What makes two texts of one write differ: the number of events, NOTIFY, claim. */
  get shape(): number {
    return this.count * 4 + (this.notify ? 1 : 0) + (this.claim ? 2 : 0);
  }
}

/** A claim of the events as the statement stores them: leased to `owner` until `leaseUntil`. */
export interface EventsClaim {
  owner: string;
  leaseUntil: number;
}

/** A write joined with its events, and what it stores of each (read back from its own values). */
export class OutboxEventsStatement {
  constructor(
    readonly statement: PostgresStatement & { values: unknown[] },
    private readonly layout: EventsLayout,
  ) {}

  /** Event `i`'s columns as the statement binds them, its payload parsed back from the JSON sent. */
  stored(i: number): Pick<Row, 'event_id' | 'aggregate' | 'aggregate_id' | 'version' | 'payload' | 'next_attempt_at'> {
    const values = this.statement.values;
    const at = this.layout.event(i) - 1; // `$n` counts from 1
    return {
      event_id: values[at] as string,
      aggregate: values[at + 1] as string,
      aggregate_id: values[at + 2] as string,
      version: String(values[at + 3]),
      payload: JSON.parse(values[at + 4] as string),
      next_attempt_at: String(values[at + 5]),
    };
  }
}

/**
 * The statements that insert a write's events with it (see PostgresOutboxStore.withEvents):
 * `WITH w AS (<the write> RETURNING 1) INSERT INTO outbox … SELECT … FROM w`, every value a
 * parameter. The text depends only on the write's and the layout's shape, so it is made once
 * per pair and sent as a prepared statement.
 */
export class OutboxEventsStatements {
  /** Texts by the write's text, then by layout shape. */
  private readonly texts = new Map<string, Map<number, string>>();

  constructor(
    private readonly pool: Pool,
    /** The outbox table, quoted. */
    private readonly table: string,
  ) {}

  /**
   * `write` extended to insert `events` when (and only when) it matched a row; its row count is
   * then the number of events inserted. With `channel` the statement also calls `pg_notify` on
   * it. With `claim`, the events are stored leased to `claim.owner` until `claim.leaseUntil` when
   * their instance has no pending event (checked in the same statement), and each inserted row
   * says whether it was (`claimed`).
   */
  build(
    write: PostgresStatement,
    events: readonly DataSyncEvent[],
    now: number,
    channel: string | undefined,
    claim?: EventsClaim,
  ): OutboxEventsStatement {
    const values: unknown[] = [...(write.values ?? [])];
    const layout = new EventsLayout(values.length, events.length, channel !== undefined, claim !== undefined);
    // Checked before the statement is sent: an event refused here leaves nothing written.
    const due = firstDueAt(events, now);
    for (const event of events)
      values.push(event.eventId, event.aggregate, String(event.id), event.version, payloadOf(event), due);
    values.push(now);
    if (channel !== undefined) values.push(channel);
    if (claim !== undefined) values.push(claim.owner, claim.leaseUntil);
    const text = this.text(write.text, layout);
    const statement = preparedStatement(this.pool, text, values) as PostgresStatement & { values: unknown[] };
    return new OutboxEventsStatement(statement, layout);
  }

  /** The text of build(), made once per write text and layout shape. */
  private text(write: string, layout: EventsLayout): string {
    let texts = this.texts.get(write);
    if (texts === undefined) this.texts.set(write, (texts = new Map()));
    let text = texts.get(layout.shape);
    if (text !== undefined) return text;
    const { count, notify, claim } = layout;
    const event = (i: number) => {
      const at = layout.event(i);
      return `$${at}::text, $${at + 1}::text, $${at + 2}::text, $${at + 3}::bigint, $${at + 4}::json, $${at + 5}::bigint`;
    };
    const time = `$${layout.time}::bigint`;
    const t = this.table;
    // Claimed only when the instance has nothing pending: the new events are then its head.
    const free = claim
      ? `, f AS (SELECT NOT EXISTS (SELECT 1 FROM ${t} x WHERE x.aggregate = $${layout.first + 1}::text ` +
        `AND x.aggregate_id = $${layout.first + 2}::text AND x.dead_at IS NULL) AS free)`
      : '';
    const lease = claim
      ? `, CASE WHEN f.free THEN $${layout.owner}::text END, CASE WHEN f.free THEN $${layout.leaseUntil}::bigint END`
      : '';
    const from = claim ? 'FROM w CROSS JOIN f' : 'FROM w';
    // One event (the common case) is a plain SELECT from the write; several come from VALUES
    // in the order the write collected them, which is the order their seq is drawn in.
    const source =
      count === 1
        ? `SELECT ${event(0)}, ${time}${lease} ${from}`
        : `SELECT v.event_id, v.aggregate, v.aggregate_id, v.version, v.payload, v.next_attempt_at, ${time}${lease} ${from} ` +
          `CROSS JOIN (VALUES ${Array.from({ length: count }, (_, i) => `(${i}, ${event(i)})`).join(', ')}) ` +
          'AS v(ord, event_id, aggregate, aggregate_id, version, payload, next_attempt_at) ORDER BY v.ord';
    text =
      `WITH w AS (${write} RETURNING 1)${free} ` +
      `INSERT INTO ${t} (event_id, aggregate, aggregate_id, version, payload, next_attempt_at, stored_at${claim ? ', owner, lease_until' : ''}) ` +
      source +
      (notify
        ? ` RETURNING pg_notify($${layout.channel}, '')`
        : claim
          ? ' RETURNING owner IS NOT NULL AS claimed'
          : '');
    texts.set(layout.shape, text);
    return text;
  }
}
