import type { AsyncIdGenerator, IdGenerator } from '../id-generator.interfaces.js';

/** A plain IdGenerator with `generateAsync()` added; `generator` is the one it wraps. */
export class AsyncIdGeneratorAdapter implements AsyncIdGenerator {
  constructor(readonly generator: IdGenerator) {}

  generate(): string {
    return this.generator.generate();
  }

  generateAsync(): Promise<string> {
    return new Promise((resolve) => resolve(this.generator.generate()));
  }
}

export function isAsyncIdGenerator(generator: IdGenerator): generator is AsyncIdGenerator {
  return typeof (generator as Partial<AsyncIdGenerator>).generateAsync === 'function';
}

/** The generator itself when it has `generateAsync()`, else an adapter that resolves `generate()`. */
export function toAsyncIdGenerator(generator: IdGenerator): AsyncIdGenerator {
  return isAsyncIdGenerator(generator) ? generator : new AsyncIdGeneratorAdapter(generator);
}
