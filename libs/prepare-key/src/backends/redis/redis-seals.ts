import { Logger } from '@nestjs/common';
import { withDeadline } from '@ddd-kit/core/internal';
import type { Cluster, Redis } from 'ioredis';
import { CLUSTER_SLOTS, clusterSlot, luaScript, runScriptOnKeys, slotTag } from '@ddd-kit/core/redis';
import { newOperationId } from '../../operation-id.js';

const logger = new Logger('PrepareKey');

/** Restores every reservation of the factory's keys (the restorers given to it); resolves when all are back. */
export type RestoreReservations = () => Promise<void>;

/** Registers a restore run (ARGV[1]) beside the seal it may set: a wipe drops the registration too. */
const BEGIN = luaScript(`
redis.call('SADD', KEYS[1], ARGV[1])
return 1
`);

/**
 * Sets the seal (KEYS[2]) only while this run's registration (ARGV[1] in KEYS[1]) is still
 * there: when the store lost its data again during the restore, the registration went with it,
 * and what the run restored before that is gone, so it must not seal.
 */
const SEAL = luaScript(`
local mine = redis.call('SREM', KEYS[1], ARGV[1])
if mine == 1 then redis.call('SET', KEYS[2], ARGV[2]) end
return mine
`);

/**
 * The seals of a RedisPrepareKeyFactory: how a store that lost its data is recognised, and how
 * it is filled again before it answers.
 *
 * A seal is a marker key that every reservation script requires (KEYS[2], see
 * redis-prepare-key.scripts.ts): Redis without persistence, a FLUSHALL, or a failover to an empty
 * node loses the seal with the records, and every operation then rejects with
 * PrepareKeyDataLostError instead of answering from an empty store. One seal serves every key of
 * the factory's keyPrefix. A Cluster loses its shards one by one, and a script only reaches keys
 * of its record's slot, so there a seal lives in every slot: `<keyPrefix>{<slot tag>}seal` beside
 * each record of that slot. A single node has one: `<keyPrefix>seal`. Neither matches the
 * records' `<keyPrefix>{<name>:` pattern.
 *
 * Recovery (one at a time in a process; any number of processes may run it at once,
 * since a restore re-reserves each value for its own owner): register the run in every seal's
 * slot, restore every reservation from its owners, then set each seal whose slot still holds the
 * run's registration. The store is sealed only after a full restore; a brand-new store is sealed
 * the same way (restoring from an empty write model is cheap).
 */
export class RedisSeals {
  private recovery: Promise<void> | undefined;
  /** True once this process saw the store sealed: a missing seal is then a loss, not a first start. */
  private sealedOnce = false;

  constructor(
    private readonly client: Redis | Cluster,
    private readonly keyPrefix: string,
    private readonly restore: RestoreReservations,
    /** Each command's deadline, as for every operation (RedisPrepareKeyFactoryOptions.operationTimeoutMs). */
    private readonly operationTimeoutMs: number,
  ) {}

  /** The seal that an operation on `recordKey` checks. */
  keyOf(recordKey: string): string {
    return this.keyAt('seal', this.client.isCluster ? clusterSlot(recordKey) : undefined);
  }

  get hasBeenSealed(): boolean {
    return this.sealedOnce;
  }

  markSealed(): void {
    this.sealedOnce = true;
  }

  /** Whether every seal is there. */
  async isSealed(): Promise<boolean> {
    const found = await this.eachSlot((slot) => this.client.exists(this.keyAt('seal', slot)));
    return found.every((exists) => exists === 1);
  }

  /** At start-up (PrepareKeyModule's bootstrap): restores and seals unless sealed. */
  async ensure(): Promise<void> {
    if (await this.isSealed()) this.markSealed();
    else await this.recover();
  }

  /** Restores, then seals; joins the recovery already running in this process. */
  recover(): Promise<void> {
    this.recovery ??= this.restoreAndSeal().finally(() => (this.recovery = undefined));
    return this.recovery;
  }

  /** `recover` for an operation that has already answered: a failure is logged, the next operation tries again. */
  recoverInBackground(): void {
    this.recover().catch((error: unknown) => {
      logger.error(
        `could not restore the reservations under '${this.keyPrefix}' (the next operation tries again): ${error instanceof Error ? error.message : String(error)}`,
      );
    });
  }

  private async restoreAndSeal(): Promise<void> {
    const run = newOperationId();
    await this.eachSlot((slot) => runScriptOnKeys(this.client, BEGIN, [this.keyAt('restoring', slot)], [run]));
    // Before this process saw the store sealed, it may be new (a first start): only a loss warns.
    const report = this.sealedOnce ? logger.warn.bind(logger) : logger.log.bind(logger);
    report(`restoring the reservations under '${this.keyPrefix}' from their owners: the store is not sealed`);
    await this.restore();
    const at = String(Date.now());
    const sealed = await this.eachSlot((slot) =>
      runScriptOnKeys(this.client, SEAL, [this.keyAt('restoring', slot), this.keyAt('seal', slot)], [run, at]),
    );
    const lost = sealed.filter((mine) => mine !== 1).length;
    if (lost > 0) {
      throw new Error(
        `the store lost data again while the reservations under '${this.keyPrefix}' were restored (${lost} slot(s)); not sealed`,
      );
    }
    this.markSealed();
    logger.log(`the reservations under '${this.keyPrefix}' are restored; the store is sealed`);
  }

  /** undefined: the single node (one seal); else every slot of the Cluster. */
  private slots(): Array<number | undefined> {
    return this.client.isCluster ? Array.from({ length: CLUSTER_SLOTS }, (_, slot) => slot) : [undefined];
  }

  /** `<keyPrefix>seal` on a single node; `<keyPrefix>{<slot tag>}seal` in a slot of a Cluster. */
  private keyAt(kind: 'seal' | 'restoring', slot: number | undefined): string {
    return slot === undefined ? `${this.keyPrefix}${kind}` : `${this.keyPrefix}{${slotTag(slot)}}${kind}`;
  }

  /** One command per slot, a bounded number in flight (a Cluster has 16,384 slots). */
  private async eachSlot<T>(run: (slot: number | undefined) => Promise<T>): Promise<T[]> {
    const slots = this.slots();
    const results: T[] = [];
    for (let i = 0; i < slots.length; i += 1024) {
      const batch = slots
        .slice(i, i + 1024)
        .map((slot) =>
          withDeadline(
            run(slot),
            this.operationTimeoutMs,
            `Redis seal check of the prepare keys under '${this.keyPrefix}'`,
          ),
        );
      results.push(...(await Promise.all(batch)));
    }
    return results;
  }
}
