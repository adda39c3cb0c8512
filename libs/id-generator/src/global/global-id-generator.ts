import type { IdGenerator } from '../id-generator.interfaces.js';

interface MaybeAsync extends IdGenerator {
  generateAsync?(): Promise<string>;
}

/**
 * The application's generator for message IDs (commands, events, envelopes). Inject it by
 * class; `generateGlobalId()` reaches the same one without injection. By default a clock-synced
 * CosIdGenerator on the distributed machine ID.
 */
export class GlobalIdGenerator implements IdGenerator {
  constructor(readonly generator: IdGenerator) {}

  generate(): string {
    return this.generator.generate();
  }

  /** Waits out a clock that moved back (up to the ClockSync broken threshold) instead of throwing. */
  generateAsync(): Promise<string> {
    const generator = this.generator as MaybeAsync;
    if (typeof generator.generateAsync === 'function') return generator.generateAsync();
    return new Promise((resolve) => resolve(generator.generate()));
  }
}
