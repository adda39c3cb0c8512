import { toAsyncIdGenerator } from '../generators/async-id-generator.js';
import type { AsyncIdGenerator, IdGenerator } from '../id-generator.interfaces.js';

/**
 * The application's generator for message IDs (commands, events, envelopes). Inject it by
 * class; `generateGlobalId()` reaches the same one without injection. By default a clock-synced
 * CosIdGenerator on the distributed machine ID.
 */
export class GlobalIdGenerator implements AsyncIdGenerator {
  private readonly usable: AsyncIdGenerator;

  constructor(readonly generator: IdGenerator) {
    this.usable = toAsyncIdGenerator(generator);
  }

  generate(): string {
    return this.generator.generate();
  }

  /**
   * Waits out a clock that moved back (up to the ClockSync broken threshold), and a machine-ID
   * lease being renewed or replaced, instead of throwing.
   */
  generateAsync(): Promise<string> {
    return this.usable.generateAsync();
  }
}
