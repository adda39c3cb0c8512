import { IdGeneratorError } from './id-generator.error.js';

/**
 * A synchronous `SegmentId.generate()` found no prefetched number left: the next segment has
 * not arrived from Redis yet. `generateAsync()` waits for it instead.
 */
export class SegmentExhaustedError extends IdGeneratorError {
  override readonly code = 'SEGMENT_EXHAUSTED';

  constructor(key: string, cause?: unknown) {
    super(
      `No prefetched segment left for "${key}"${cause ? ' (the last fetch failed)' : ''}: await generateAsync() or ready(), ` +
        'or raise segmentSize / prefetchSegments so that prefetching keeps ahead of demand',
      { cause },
    );
  }
}
