import { activeTransactionFor, outsideTransaction, type PgResult } from '@ddd-kit/core/postgres';
import type { Pool } from 'pg';
import type { DataSyncEvent } from '../../data-sync/data-sync-event.js';
import { RepositoryConfigurationError } from '../../errors.js';
import type { OutboxClaim, OutboxLocalRelay, OutboxRecord } from '../../outbox/outbox.interfaces.js';
import { eventOf } from './postgres-outbox.rows.js';
import type { OutboxEventsStatement, OutboxEventsStatements } from './postgres-outbox.statement.js';
import type { OutboxWakeUp } from './postgres-outbox.wake.js';
import type { PostgresStatement } from './postgres-repository.statements.js';

/** A repository's write joined with its events (see PostgresOutboxStore.joinWrite). */
export interface OutboxJoinedWrite {
  readonly statement: PostgresStatement;
  /** The statement ran and matched (its result): after the commit, the relays learn of the events. */
  wrote(result: PgResult): void;
}

/** What joining needs of its store. */
export interface OutboxJoinTarget {
  /** The store's pool: a repository on another pool would not commit its events with its rows. */
  readonly pool: Pool;
  /** The notify channel, when there is one. */
  readonly channel: string | undefined;
  readonly statements: OutboxEventsStatements;
  readonly wakeUp: OutboxWakeUp;
  ensureTable(): Promise<void>;
}

/**
 * How a PostgresRepository's writes get their events into the outbox, and how relays of this
 * process get them from there: stored unclaimed (the relays woken once committed), or — when an
 * attached relay has room and the commit can be observed — already claimed by that relay, which
 * then takes them as they commit, with no claim of its own.
 */
export class OutboxWriteJoin {
  /** Relays of this process that take the store's writes as they commit (attach). */
  private readonly relays = new Set<OutboxLocalRelay>();

  constructor(private readonly target: OutboxJoinTarget) {}

  /** See PostgresOutboxStore.joinWrite. */
  async join(
    pool: Pool,
    repository: string,
    write: PostgresStatement,
    events: readonly DataSyncEvent[],
  ): Promise<OutboxJoinedWrite> {
    if (events.length === 0) return { statement: write, wrote: () => undefined };
    const target = this.target;
    if (target.pool !== pool) {
      throw new RepositoryConfigurationError(
        `${repository}: its outbox (PostgresOutboxStore) must use the repository's own pool, so that events commit in the same transaction as the row`,
      );
    }
    await target.ensureTable();
    const transaction = activeTransactionFor(pool);
    // A commit that cannot be observed: the statement carries its own NOTIFY (see OutboxWakeUp).
    if (transaction !== undefined && transaction.afterCommit === undefined)
      return { statement: this.unclaimed(write, events, Date.now(), true), wrote: () => undefined };
    const relay = this.relayWithRoom(events);
    if (relay === undefined) return { statement: this.unclaimed(write, events), wrote: this.wakeAfterWrite };
    const now = Date.now();
    const leaseUntil = relay.now() + relay.leaseMs;
    const joined = target.statements.build(write, events, now, undefined, { owner: relay.owner, leaseUntil });
    return {
      statement: joined.statement,
      wrote: (result) => {
        if ((result.rows[0] as { claimed?: boolean } | undefined)?.claimed !== true) return this.wakeAfterWrite();
        // The relay's lane runs its store calls in no use case's transaction, whatever encloses this one.
        const handOff = () =>
          outsideTransaction(() => relay.take(handedOffClaim(relay.owner, leaseUntil, now, events, joined)));
        if (transaction === undefined) handOff();
        else transaction.afterCommit!(handOff);
      },
    };
  }

  /**
   * The write with its events stored unclaimed (see PostgresOutboxStore.withEvents); with
   * `notify`, the statement notifies the channel itself.
   */
  unclaimed(
    write: PostgresStatement,
    events: readonly DataSyncEvent[],
    now = Date.now(),
    notify = false,
  ): PostgresStatement {
    if (events.length === 0) return write;
    const channel = notify ? this.target.channel : undefined;
    return this.target.statements.build(write, events, now, channel).statement;
  }

  /** Hands the store's claims to `relay` from now on (see OutboxStore.attachRelay). */
  attach(relay: OutboxLocalRelay): () => void {
    this.relays.add(relay);
    return () => void this.relays.delete(relay);
  }

  /**
   * The events stored unclaimed: wakes the relays once committed — at once when autocommitted,
   * after the ambient transaction's commit otherwise (never after a rollback); those of other
   * processes only with a notify channel.
   */
  private readonly wakeAfterWrite = (): void => this.target.wakeUp.afterWrite();

  /**
   * An attached relay that takes more now, when every event is of one instance (one write's are)
   * and none is held for later (a held event waits in the table, unclaimed, until it is due).
   */
  private relayWithRoom(events: readonly DataSyncEvent[]): OutboxLocalRelay | undefined {
    if (this.relays.size === 0) return undefined;
    const [{ aggregate, id }] = events;
    if (events.some((event) => event.aggregate !== aggregate || event.id !== id || event.availableAt !== undefined))
      return undefined;
    for (const relay of this.relays) if (relay.hasRoom()) return relay;
    return undefined;
  }
}

/**
 * The claim a write stored for a relay of its process, as `claim` would have returned it: the
 * events read back from what the statement stored (what any other path delivers), version order kept.
 */
function handedOffClaim(
  owner: string,
  leaseUntil: number,
  storedAt: number,
  events: readonly DataSyncEvent[],
  joined: OutboxEventsStatement,
): OutboxClaim {
  const records = events.map((written, i): OutboxRecord => {
    const stored = joined.stored(i);
    const event = eventOf(stored);
    return {
      eventId: event.eventId,
      aggregate: event.aggregate,
      aggregateId: event.id,
      version: written.version,
      event,
      storedAt,
      attempts: 0,
      nextAttemptAt: Number(stored.next_attempt_at),
      lastError: null,
      deadAt: null,
    };
  });
  return { aggregate: records[0].aggregate, aggregateId: records[0].aggregateId, owner, leaseUntil, events: records };
}
