import type { RecordPage } from '../../prepare-key.interfaces.js';

/** A record as the memory backend keeps it; `seq` orders keys for listing. */
interface MemoryRecord {
  value: string;
  ttlAt: number;
  /** The operation that wrote it. */
  op: string;
  readonly seq: number;
}

/** Entries the sweeper examines per insertion: more than one, so it outpaces growth. */
const SWEEP_STEP = 2;
/** Open listing cursors kept for O(pageSize) continuation; older ones fall back to a scan. */
const MAX_OPEN_CURSORS = 16;

/**
 * The records of one name. Every method is synchronous, so each backend primitive that calls
 * one is a single step on the event loop: nothing interleaves with it, which is what makes
 * the memory backend atomic.
 *
 * A record whose ttlAt + retention has passed is dead: every read treats it as absent and
 * deletes it on sight, and an incremental sweeper walks the map a few entries per insertion,
 * so dead records are dropped without a timer and without one long pause.
 */
export class MemoryRecordStore {
  private readonly records = new Map<string, MemoryRecord>();
  private sweeper: IterableIterator<[string, MemoryRecord]> = this.records.entries();
  private seq = 0;
  private readonly cursors = new Map<string, IterableIterator<[string, MemoryRecord]>>();

  constructor(private readonly retentionMs: number) {}

  get size(): number {
    return this.records.size;
  }

  /** The record unless it is absent or dead (a dead one is deleted). */
  find(key: string, now: number): MemoryRecord | undefined {
    const record = this.records.get(key);
    if (record === undefined) return undefined;
    if (record.ttlAt + this.retentionMs <= now) {
      this.records.delete(key);
      return undefined;
    }
    return record;
  }

  /** Writes a record; an existing (expired or dead) one is overwritten in place. */
  put(key: string, value: string, ttlAt: number, op: string, now: number): void {
    const record = this.records.get(key);
    if (record !== undefined) {
      record.value = value;
      record.ttlAt = ttlAt;
      record.op = op;
      return;
    }
    this.records.set(key, { value, ttlAt, op, seq: ++this.seq });
    this.sweep(now);
  }

  delete(key: string): void {
    this.records.delete(key);
  }

  /**
   * One page in insertion order. A cursor is the seq of the last record returned; the live
   * Map iterator behind it is kept, so the next page continues in O(pageSize). Map iterators
   * survive concurrent inserts and deletes: a record present throughout a listing is returned
   * exactly once. A cursor whose iterator was evicted falls back to skipping by seq.
   */
  page(cursor: string | undefined, pageSize: number, now: number): RecordPage {
    let iterator = cursor === undefined ? undefined : this.cursors.get(cursor);
    if (cursor !== undefined) this.cursors.delete(cursor);
    const after = cursor === undefined ? 0 : Number(cursor);
    const resumed = iterator !== undefined;
    iterator ??= this.records.entries();

    const records: RecordPage['records'] = [];
    let last = after;
    while (records.length < pageSize) {
      const step = iterator.next();
      if (step.done) return { records };
      const [key, record] = step.value;
      if (!resumed && record.seq <= after) continue;
      last = record.seq;
      if (record.ttlAt + this.retentionMs <= now) {
        this.records.delete(key);
        continue;
      }
      records.push({ key, value: record.value, ttlAt: record.ttlAt });
    }
    const next = String(last);
    if (this.cursors.size >= MAX_OPEN_CURSORS) this.cursors.delete(this.cursors.keys().next().value!);
    this.cursors.set(next, iterator);
    return { records, next };
  }

  private sweep(now: number): void {
    for (let i = 0; i < SWEEP_STEP; i++) {
      const step = this.sweeper.next();
      if (step.done) {
        this.sweeper = this.records.entries();
        return;
      }
      const [key, record] = step.value;
      if (record.ttlAt + this.retentionMs <= now) this.records.delete(key);
    }
  }
}
