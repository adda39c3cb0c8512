import { describe, expect, it } from '@jest/globals';
import { IdGeneratorError } from '../errors.js';
import { SegmentId } from './segment-id.js';
import type { SegmentSource } from './segment/segment-source.js';

/** A mark in memory that can be moved back, as a failover to a replica that lost writes does. */
class RollbackSource implements SegmentSource {
  readonly ordered = true;
  mark = 0;
  reserve(_key: string, size: number): Promise<number> {
    return Promise.resolve((this.mark += size));
  }
}

// After the store's mark moved back, the next blocks it hands out were handed out before: they
// are refused, never issued again (CosId checks each block lies above the last one likewise).
describe('SegmentId whose store mark moves back', () => {
  it('issues no number twice: 300 IDs asked across the rollback, every one distinct', async () => {
    const source = new RollbackSource();
    const ids = new SegmentId({ source, key: 'orders', segmentSize: 100, prefetchSegments: 1 });
    const issued: string[] = [];
    for (let i = 0; i < 100; i++) issued.push(await ids.generateAsync());
    source.mark = 0; // the store lost every block handed out (the next one, (100, 200], was prefetched)
    for (let i = 0; i < 200; i++) {
      const next = await ids.generateAsync().catch((error: unknown) => error);
      if (typeof next === 'string') issued.push(next);
      else expect(next).toBeInstanceOf(IdGeneratorError);
    }
    expect(new Set(issued).size).toBe(issued.length);
    expect(issued.length).toBeGreaterThanOrEqual(100);
  });

  it('says the block lies below the last one, and goes on once the mark passes it again', async () => {
    const source = new RollbackSource();
    const ids = new SegmentId({ source, key: 'orders', segmentSize: 10, prefetchSegments: 1 });
    for (let i = 0; i < 10; i++) await ids.generateAsync(); // (0, 10]; (10, 20] prefetched
    source.mark = 5;
    for (let i = 0; i < 10; i++) await ids.generateAsync(); // the prefetched (10, 20]
    await expect(ids.generateAsync()).rejects.toThrow(/does not lie above the last block received \(up to 20\)/);
    source.mark = 20; // raised past the last block, as the error says
    expect(await ids.generateAsync()).toBe('21');
  });
});
