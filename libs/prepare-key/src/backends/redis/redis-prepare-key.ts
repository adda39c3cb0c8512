import type { Cluster, Redis } from 'ioredis';
import { PrepareKey } from '../../prepare-key.js';
import type { RecordPage, RollbackCondition, StoredRecord } from '../../prepare-key.interfaces.js';
import { TTL_FOREVER } from '../../prepared-value.js';
import { NO_EXPIRY } from './redis-prepare-key.constants.js';
import { withDeadline } from '@ddd-kit/core/internal';
import { runScriptOnKeys, runScriptThen, type LuaScript } from '@ddd-kit/core/redis';
import { PrepareKeyDataLostError } from '../../errors.js';
import { PREPARE, READ, READ_MANY, REPREPARE, ROLLBACK, UNSEALED } from './redis-prepare-key.scripts.js';
import {
  decodeKeyPart,
  decodeRecord,
  encodeKeyPart,
  encodeRecord,
  recordKeyHead,
  settledByRecord,
} from './redis-prepare-key.utils.js';
import type { RedisKeyScanner } from './redis-key-scanner.js';
import type { ServerClock } from '../../server-clock.js';
import type { RedisSeals } from './redis-seals.js';

/** What every key of one RedisPrepareKeyFactory shares. */
export interface RedisPrepareKeyContext {
  client: Redis | Cluster;
  /** Used as given: record keys are `<keyPrefix>{<name>:<key>}`. */
  keyPrefix: string;
  retentionMs: number;
  /** Each primitive's deadline (see RedisPrepareKeyFactoryOptions). */
  operationTimeoutMs: number;
  clock: ServerClock;
  scanner: RedisKeyScanner;
  /**
   * Whether the server takes `SET … NX GET` (Redis 7.0+). Cleared for good by the first
   * `ERR syntax error` (Redis 6.2 refuses NX with GET, and writes nothing): prepare then runs
   * the PREPARE script only.
   */
  setNxGet: boolean;
  /** The seals every operation checks (see RedisSeals), and the recovery of a store that lost them. */
  seals: RedisSeals;
}

/**
 * A PrepareKey on Redis or Redis Cluster. Each primitive is atomic on the record's key, so
 * concurrent callers in any number of processes see each operation as atomic, and a command
 * resent after a lost reply recognises its own effect by the operation id stored with the
 * record. Expiry is decided by the Redis server's clock (see redis-prepare-key.scripts.ts).
 *
 * `prepare` first sends the native `SET <key> <record> NX GET [PXAT <dropAt>]`, which costs
 * Redis about what a bare `SET NX` does (a Lua script costs it several times more): on a free
 * key it writes the very record the PREPARE script would write, and the reply settles a held
 * key too (settledByRecord). Only a record with a ttlAt, whose expiry the server's clock must
 * decide, or a tombstone, sends the PREPARE script after it, which decides atomically by itself.
 *
 * Every primitive waits for Redis at most `operationTimeoutMs`, then rejects with
 * OperationTimeoutError: an unknown outcome, handled as a lost reply is (undoPrepare).
 */
export class RedisPrepareKey<V = unknown> extends PrepareKey<V> {
  private readonly client: Redis | Cluster;
  private readonly head: string;
  /**
   * `checksSeal: false` only for the key a restore writes through: it fills a store that is not
   * sealed yet (every other operation checks the seal in its script).
   */
  constructor(
    readonly name: string,
    private readonly context: RedisPrepareKeyContext,
    private readonly checksSeal = true,
  ) {
    super();
    this.client = context.client;
    this.head = recordKeyHead(context.keyPrefix, name);
  }

  protected override now(): number {
    return this.context.clock.now();
  }

  protected doPrepare(key: string, value: string, ttlAt: number, op: string): Promise<boolean> {
    return this.prepareNative(key, value, ttlAt, op, false);
  }

  protected override doPrepareOrUndo(key: string, value: string, ttlAt: number, op: string): Promise<boolean> {
    return this.prepareNative(key, value, ttlAt, op, true);
  }

  /**
   * The hot path: one promise step on top of the client's, no async frame. With `undo`, a failure
   * goes to undoPrepare from the step that reads the reply (the default doPrepareOrUndo would add
   * a step of its own for it).
   */
  private prepareNative(key: string, value: string, ttlAt: number, op: string, undo: boolean): Promise<boolean> {
    let recordKey: string;
    try {
      recordKey = this.recordKey(key);
    } catch (error) {
      return Promise.reject(error); // nothing was sent: nothing to undo
    }
    const record = encodeRecord(value, ttlAt, op);
    const dropAt = this.dropAt(ttlAt);
    // The native SET cannot check the seal: a key that checks it always runs the script.
    if (this.checksSeal || !this.context.setNxGet)
      return this.prepareByScript(key, recordKey, record, dropAt, op, undo);
    // A drop time in the past (a record written past its retention) is taken too: Redis then
    // holds no record, as the script's DEL leaves none.
    const set = this.bounded(
      dropAt === NO_EXPIRY
        ? this.client.set(recordKey, record, 'NX', 'GET')
        : this.client.set(recordKey, record, 'PXAT', dropAt, 'NX', 'GET'),
      'prepare',
    );
    return set.then(
      (current) => {
        // null: the key was free and holds this record now.
        if (current === null) return true;
        return settledByRecord(current, record) ?? this.prepareByScript(key, recordKey, record, dropAt, op, undo);
      },
      (error: unknown) => {
        if (!isSyntaxError(error)) return this.failed(key, op, error, undo);
        this.context.setNxGet = false;
        return this.prepareByScript(key, recordKey, record, dropAt, op, undo);
      },
    );
  }

  private prepareByScript(
    key: string,
    recordKey: string,
    record: string,
    dropAt: string,
    op: string,
    undo: boolean,
  ): Promise<boolean> {
    const prepared = this.checksSeal
      ? this.run(PREPARE, recordKey, [record, dropAt, op], 'prepare').then(isOne)
      : this.bounded(runScriptThen(this.client, PREPARE, recordKey, [record, dropAt, op], isOne), 'prepare');
    return undo ? prepared.then(undefined, (error: unknown) => this.undoPrepare(key, op, error)) : prepared;
  }

  private failed(key: string, op: string, error: unknown, undo: boolean): Promise<never> {
    return undo ? this.undoPrepare(key, op, error) : Promise.reject(error);
  }

  protected async doGetValue(key: string): Promise<StoredRecord | undefined> {
    const [serverNow, record] = (await this.run(READ, this.recordKey(key), [], 'get')) as [number, string | null];
    this.context.clock.observe(serverNow);
    return record === null ? undefined : decodeRecord(record);
  }

  /**
   * On one node, one script per READ_MANY_CHUNK keys (the seal checked once), all sent at once:
   * reconciliation reads a page of keys at a time. On a Cluster the keys live in many slots: one
   * READ each.
   */
  protected override async doGetValues(keys: readonly string[]): Promise<Array<StoredRecord | undefined>> {
    if (this.client.isCluster) return super.doGetValues(keys);
    const recordKeys = keys.map((key) => this.recordKey(key));
    const chunks: string[][] = [];
    for (let at = 0; at < recordKeys.length; at += READ_MANY_CHUNK)
      chunks.push(recordKeys.slice(at, at + READ_MANY_CHUNK));
    const replies = await Promise.all(
      chunks.map((chunk) => {
        const send = (scriptKeys: string[], args: string[]) =>
          this.bounded(runScriptOnKeys(this.client, READ_MANY, scriptKeys, args), 'get');
        if (!this.checksSeal) return send(chunk, ['']);
        return this.checkingSeal(() => send([this.context.seals.keyOf(chunk[0]), ...chunk], ['seal']));
      }),
    );
    const records: Array<StoredRecord | undefined> = [];
    for (const reply of replies as Array<[number, Array<string | null>]>) {
      this.context.clock.observe(reply[0]);
      for (const record of reply[1]) records.push(record === null ? undefined : decodeRecord(record));
    }
    return records;
  }

  protected async doRollback(key: string, op: string, condition?: RollbackCondition): Promise<boolean> {
    const recordKey = this.recordKey(key);
    const deleted =
      condition === undefined
        ? await this.run(ROLLBACK, recordKey, [op], 'rollback')
        : condition.value !== undefined
          ? await this.run(ROLLBACK, recordKey, [op, 'value', condition.value], 'rollback')
          : await this.run(ROLLBACK, recordKey, [op, 'op', condition.op], 'rollback');
    return deleted === 1;
  }

  protected async doReprepare(
    key: string,
    value: string,
    ttlAt: number,
    op: string,
    expected?: string,
  ): Promise<boolean> {
    const recordKey = this.recordKey(key);
    const record = encodeRecord(value, ttlAt, op);
    const dropAt = this.dropAt(ttlAt);
    const replaced =
      expected === undefined
        ? await this.run(REPREPARE, recordKey, [record, dropAt, op], 'reprepare')
        : await this.run(REPREPARE, recordKey, [record, dropAt, op, expected], 'reprepare');
    return replaced === 1;
  }

  protected doListPage(cursor: string | undefined, pageSize: number): Promise<RecordPage> {
    return this.bounded(this.listPage(cursor, pageSize), 'records');
  }

  private async listPage(cursor: string | undefined, pageSize: number): Promise<RecordPage> {
    const { keys, next } = await this.context.scanner.page(this.head, cursor, pageSize);
    const records = await this.readAll(keys);
    const page: RecordPage = { records: [], next };
    for (let i = 0; i < keys.length; i++) {
      // null: dropped between SCAN and the read; undefined: a tombstone (rolled back).
      const record = records[i] === null ? undefined : decodeRecord(records[i]!);
      if (record !== undefined)
        page.records.push({ key: decodeKeyPart(keys[i].slice(this.head.length, -1)), ...record });
    }
    return page;
  }

  /**
   * Runs a script on the record, with its seal when this key checks it. A missing seal means the
   * store lost its data: the script changed nothing, and the operation rejects with
   * PrepareKeyDataLostError while the reservations are restored in the background — except
   * before this process ever saw the store sealed (its first start on a new or emptied store):
   * then it waits for the restore and runs once more.
   */
  private run(script: LuaScript, recordKey: string, args: string[], operation: string): Promise<unknown> {
    // Each round trip is bounded; a restore this call waits for (a first start) is not.
    const send = (keys: string[]) => this.bounded(runScriptOnKeys(this.client, script, keys, args), operation);
    if (!this.checksSeal) return send([recordKey]);
    const keys = [recordKey, this.context.seals.keyOf(recordKey)];
    return this.checkingSeal(() => send(keys));
  }

  /** `send()` (a script that checks the seal), with what a missing seal means: see run. */
  private checkingSeal(send: () => Promise<unknown>): Promise<unknown> {
    const { seals } = this.context;
    return send().then(
      (reply) => {
        if (!seals.hasBeenSealed) seals.markSealed();
        return reply;
      },
      async (error: unknown) => {
        if (!isUnsealed(error)) throw error;
        if (seals.hasBeenSealed) throw this.lost();
        try {
          await seals.recover();
        } catch (failure) {
          throw new PrepareKeyDataLostError(this.name, { cause: failure });
        }
        return send().catch((again: unknown) => {
          throw isUnsealed(again) ? this.lost() : again;
        });
      },
    );
  }

  /** A missing seal after the store was sealed: the data was lost. Restores in the background. */
  private lost(): PrepareKeyDataLostError {
    this.context.seals.recoverInBackground();
    return new PrepareKeyDataLostError(this.name);
  }

  /** `work` under the operation deadline; the message names the operation and the key space. */
  private bounded<T>(work: Promise<T>, operation: string): Promise<T> {
    return withDeadline(work, this.context.operationTimeoutMs, `Redis ${operation} of prepare key '${this.name}'`);
  }

  private recordKey(key: string): string {
    // Keys reach the primitives validated; a non-string must never become part of a command.
    if (typeof key !== 'string') throw new TypeError('a record key must be a string');
    return `${this.head}${encodeKeyPart(key)}}`;
  }

  /** When Redis drops the record: a retention period after ttlAt; never for a forever record. */
  private dropAt(ttlAt: number): string {
    const dropAt = ttlAt + this.context.retentionMs;
    if (ttlAt >= TTL_FOREVER || !Number.isSafeInteger(dropAt)) return NO_EXPIRY;
    return String(Math.max(dropAt, 1)); // a drop time at or before 1970 is simply in the past
  }

  private readAll(keys: string[]): Promise<Array<string | null>> {
    if (keys.length === 0) return Promise.resolve([]);
    // One MGET on a single node; on a Cluster the keys live in many slots, so one GET each
    // (sent together; ioredis routes each to its node).
    if (!this.client.isCluster) return this.client.mget(keys);
    return Promise.all(keys.map((key) => this.client.get(key)));
  }
}

/** Keys per READ_MANY script: a script blocks the server while it runs, so none reads too many. */
const READ_MANY_CHUNK = 1000;

function isOne(reply: unknown): boolean {
  return reply === 1;
}

/** The reply of a script that found the seal missing (see RedisSeals). */
function isUnsealed(error: unknown): boolean {
  return error instanceof Error && error.message.startsWith(UNSEALED);
}

/** The reply of a server that does not know a command's form (Redis 6.2 to `SET … NX GET`). */
function isSyntaxError(error: unknown): boolean {
  return error instanceof Error && error.message.startsWith('ERR syntax error');
}
