import { randomUUID } from 'node:crypto';
import { Logger } from '@nestjs/common';
import type { ClientConfig, Pool } from 'pg';
import { LogicalReplicationService, PgoutputPlugin } from 'pg-logical-replication';
import type { DataSyncEvent } from '../../data-sync/data-sync-event.js';
import type { WalOutboxBuffer, WalWrite } from './wal-outbox.buffer.js';
import { formatLsn, parseLsn } from './wal-outbox.lsn.js';

/** What a slot reader reads, and how it retries taking the slot. */
export interface WalSlotSettings {
  /** The replication connection's settings (the pool's, with `replication: 'database'`). */
  readonly connection: ClientConfig;
  /** For the reader's own short statements (the slot's confirmed position, the sync marks). */
  readonly pool: Pool;
  readonly slot: string;
  readonly publication: string;
  /** The prefix of the events' messages; `<prefix>:sync` marks a sync(). */
  readonly prefix: string;
  readonly retryInitialMs: number;
  readonly retryMaxMs: number;
  /** The most events held unfinished before reading pauses (see PostgresWalOutboxStoreOptions). */
  readonly maxBuffered: number;
}

/** How often the position is sent while reading pauses: well inside wal_sender_timeout (60 s by default). */
const PAUSED_STATUS_MS = 10_000;

/** The replication connection's socket, which the library keeps to itself (it pauses it the same way). */
function socketOf(service: LogicalReplicationService): { pause(): void; resume(): void } | undefined {
  return (service as unknown as { _connection?: { stream?: { pause(): void; resume(): void } } })._connection?.stream;
}

/** pgoutput's messages, as pg-logical-replication parses them (the fields read here). */
type Decoded =
  | { tag: 'begin' }
  | { tag: 'commit'; commitEndLsn: string | null }
  | { tag: 'message'; transactional: boolean; prefix: string; content: Uint8Array }
  | { tag: string };

/** A write's events as one message carries them: its time, when they are due, the events. */
interface WalMessage {
  s: number;
  n: number;
  e: DataSyncEvent[];
}

/**
 * The consumer of one logical replication slot (pgoutput, `messages` on): PostgreSQL lets one
 * session at a time stream a slot, so a reader that finds it taken (another process relays)
 * tries again with backoff until it gets it. While it holds it, each committed transaction is
 * handed to the buffer in commit order; the slot's position is sent back only as the buffer
 * confirms it (and, when nothing read is unfinished, up to what the server last reported). A
 * lost connection drops the buffer: the next session reads again from the confirmed position.
 */
export class WalSlotReader {
  private running = false;
  private loop: Promise<void> | undefined;
  private service: LogicalReplicationService | undefined;
  private wakeRetry: (() => void) | undefined;
  /** The writes of the transaction being read (between its begin and commit), and its sync marks. */
  private transaction: { writes: WalWrite[]; syncs: string[] } | undefined;
  /** The slot's position as this session confirmed it; undefined until read at the session's start. */
  private confirmed: bigint | undefined;
  private sending = false;
  private readonly syncs = new Map<string, { resolve: () => void; reject: (error: Error) => void }>();
  private readonly holders = new Set<() => void>();
  /** Why the last attempt to take the slot failed (for a status, and the log). */
  lastError: string | undefined;
  holding = false;
  /** True while reading pauses for the relays to catch up (see maxBuffered). */
  paused = false;
  private readonly logger = new Logger('PostgresWalOutboxStore');

  constructor(
    private readonly settings: WalSlotSettings,
    private readonly buffer: WalOutboxBuffer,
    /** Called after a transaction with events was read. */
    private readonly onEvents: () => void,
  ) {}

  /** Called by the buffer: every transaction ending at or before `lsn` is finished. */
  confirm(lsn: bigint): void {
    if (this.confirmed === undefined || lsn <= this.confirmed) return;
    this.confirmed = lsn;
    this.sendPosition();
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.loop = this.run();
  }

  async stop(): Promise<void> {
    if (!this.running) return;
    this.running = false;
    this.wakeRetry?.();
    // What was finished is confirmed before the session ends: its next holder starts past it.
    this.send();
    // A session streaming is ended here; an attempt to take the slot under way is left to end by
    // itself (refused, or started and then ended by began()): ending a connection still being
    // opened may never settle. Forced after a while all the same (a server that does not answer).
    if (this.holding) await this.service?.stop().catch(() => undefined);
    let timer: NodeJS.Timeout | undefined;
    const ended = await Promise.race([
      this.loop!.then(() => true),
      new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), 5_000))),
    ]);
    clearTimeout(timer);
    if (!ended) {
      await this.service?.destroy().catch(() => undefined);
      await this.loop;
    }
  }

  /** Resolves once this reader holds the slot. */
  whenHolding(): Promise<void> {
    if (this.holding) return Promise.resolve();
    return new Promise((resolve) => this.holders.add(resolve));
  }

  /**
   * Resolves once every transaction committed before the call has been read into the buffer:
   * commits a mark of its own (a message with the sync prefix) and waits to read it.
   */
  async sync(): Promise<void> {
    const token = randomUUID();
    const read = new Promise<void>((resolve, reject) => this.syncs.set(token, { resolve, reject }));
    try {
      await this.settings.pool.query('SELECT pg_logical_emit_message(true, $1::text, $2::text)', [
        `${this.settings.prefix}:sync`,
        token,
      ]);
    } catch (error) {
      this.syncs.delete(token);
      throw error;
    }
    await read;
  }

  private async run(): Promise<void> {
    let delay = this.settings.retryInitialMs;
    while (this.running) {
      const service = new LogicalReplicationService(this.settings.connection, {
        acknowledge: { auto: false, timeoutSeconds: 0 },
      });
      this.service = service;
      service.on('data', (_lsn: string, message: Decoded) => this.read(message));
      service.on('heartbeat', (lsn: string, _time: number, reply: boolean) => this.keepalive(lsn, reply));
      service.on('start', () => void this.began(() => (delay = this.settings.retryInitialMs)));
      service.on('error', () => undefined); // subscribe() rejects with it
      const plugin = new PgoutputPlugin({
        protoVersion: 1,
        publicationNames: [this.settings.publication],
        messages: true,
      });
      try {
        await service.subscribe(plugin, this.settings.slot);
      } catch (error) {
        this.lastError = (error as Error).message;
        if (this.running && !/is active for PID/.test(this.lastError))
          this.logger.warn(`Reading replication slot ${this.settings.slot} failed: ${this.lastError}`);
      }
      this.lost();
      await service.destroy().catch(() => undefined);
      if (!this.running) break;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, delay);
        this.wakeRetry = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.wakeRetry = undefined;
      delay = Math.min(delay * 2, this.settings.retryMaxMs);
    }
  }

  /** The session streams the slot: reads its confirmed position (nobody else can move it now). */
  private async began(resetBackoff: () => void): Promise<void> {
    resetBackoff();
    const { rows } = await this.settings.pool
      .query<{ lsn: string | null }>(
        'SELECT confirmed_flush_lsn::text AS lsn FROM pg_replication_slots WHERE slot_name = $1',
        [this.settings.slot],
      )
      .catch(() => ({ rows: [] as Array<{ lsn: string | null }> }));
    const lsn = rows[0]?.lsn;
    this.confirmed = lsn ? parseLsn(lsn) : 0n;
    this.holding = true;
    this.lastError = undefined;
    for (const resolve of this.holders) resolve();
    this.holders.clear();
    // Stopped while the slot was being taken: give it up at once.
    if (!this.running) await this.service?.stop().catch(() => undefined);
  }

  /** The session ended: what was read and not confirmed is read again by the next session. */
  private lost(): void {
    this.holding = false;
    this.confirmed = undefined;
    this.transaction = undefined;
    this.buffer.clear();
    if (!this.running) {
      for (const { reject } of this.syncs.values()) reject(new Error('PostgresWalOutboxStore stopped'));
      this.syncs.clear();
    }
  }

  private read(message: Decoded): void {
    switch (message.tag) {
      case 'begin':
        this.transaction = { writes: [], syncs: [] };
        return;
      case 'message': {
        const { transactional, prefix, content } = message as Extract<Decoded, { tag: 'message'; prefix: string }>;
        if (!transactional || this.transaction === undefined) return;
        const text = Buffer.from(content).toString('utf8');
        if (prefix === this.settings.prefix) {
          const written = parseMessage(text);
          // Not a write's (another session emitted with this prefix): never an event, and not
          // logged (its text is not ours to print); a thrown error here would end the process.
          if (written === undefined) {
            this.logger.warn(
              `Ignored a message on ${this.settings.slot} with the outbox's prefix that is not an outbox write`,
            );
            return;
          }
          const events = written.e.map((event) => Object.freeze(event));
          this.transaction.writes.push({ storedAt: written.s, nextAttemptAt: written.n, events });
        } else if (prefix === `${this.settings.prefix}:sync`) this.transaction.syncs.push(text);
        return;
      }
      case 'commit': {
        const transaction = this.transaction;
        this.transaction = undefined;
        const end = (message as Extract<Decoded, { tag: 'commit' }>).commitEndLsn;
        if (transaction === undefined || end === null) return;
        this.buffer.commit(parseLsn(end), transaction.writes);
        for (const token of transaction.syncs) {
          this.syncs.get(token)?.resolve();
          this.syncs.delete(token);
        }
        if (transaction.writes.length > 0) this.onEvents();
        if (this.buffer.size >= this.settings.maxBuffered) this.pause();
        return;
      }
    }
  }

  /**
   * Stops reading the socket until the relays finished half of what is held: the server then
   * keeps the WAL instead of this process the events. Messages already received are still read
   * (in order, keepalives included). The position is sent meanwhile, so that the server does
   * not take the silence for a dead reader.
   */
  private pause(): void {
    const service = this.service;
    const socket = service === undefined ? undefined : socketOf(service);
    if (this.paused || socket === undefined) return;
    this.paused = true;
    socket.pause();
    const timer = setInterval(() => this.send(), PAUSED_STATUS_MS);
    void this.buffer.whenBelow(Math.ceil(this.settings.maxBuffered / 2)).then(() => {
      clearInterval(timer);
      this.paused = false;
      if (this.service === service) socket.resume();
    });
  }

  /**
   * The server's keepalive, `lsn` its position: with nothing read unfinished, and between
   * transactions, every commit before it is finished, so the slot may move there (else it would
   * keep the WAL of other tables' writes); answered when the server asks.
   */
  private keepalive(lsn: string, reply: boolean): void {
    if (this.transaction === undefined && this.buffer.settled) this.confirm(parseLsn(lsn));
    if (reply) this.sendPosition();
  }

  /** Sends the confirmed position (coalesced: at most one message a tick). */
  private sendPosition(): void {
    if (this.sending) return;
    this.sending = true;
    setImmediate(() => {
      this.sending = false;
      this.send();
    });
  }

  private send(): void {
    const confirmed = this.confirmed;
    // Not known yet (the session just began): nothing to report.
    if (confirmed === undefined || confirmed === 0n) return;
    // acknowledge(x) reports x + 1 as written, flushed and applied: ask for one less, so the
    // slot's position is the end of the last finished commit exactly (a commit that starts
    // there is not skipped on the next session).
    void this.service?.acknowledge(formatLsn(confirmed - 1n)).catch(() => undefined);
  }
}

/** A write's message, or undefined when the text is not one. */
function parseMessage(text: string): WalMessage | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  const message = value as Partial<WalMessage> | null;
  if (
    message === null ||
    typeof message !== 'object' ||
    !Number.isFinite(message.s) ||
    !Number.isFinite(message.n) ||
    !Array.isArray(message.e) ||
    !message.e.every((event) => typeof event === 'object' && event !== null && typeof event.eventId === 'string')
  )
    return undefined;
  return message as WalMessage;
}
