import { DddKitError } from '@ddd-kit/core';

/** Declared keys with no backend to serve them. Raised at bootstrap; the message says how to configure one. */
export class PrepareKeyFactoryMissingError extends DddKitError {
  override readonly code = 'PREPARE_KEY_FACTORY_MISSING';

  constructor(
    /** The declared key names (with their class, when there is one) left without a backend. */
    readonly keys: string[],
    reason: 'no-factory' | 'no-root-module' = 'no-factory',
  ) {
    const list = keys.join(', ');
    const cause =
      reason === 'no-root-module'
        ? `is registered by PrepareKeyModule.forFeature, but no PrepareKeyModule.forRoot() or forRootAsync() was imported`
        : `is declared, but PrepareKeyModule has no factory to create ${keys.length > 1 ? 'them' : 'it'}`;
    super(
      `PrepareKey ${list} ${cause}. Configure a backend in the root module, e.g. ` +
        `PrepareKeyModule.forRoot({ factory: new MemoryPrepareKeyFactory() }) for one process, ` +
        `PrepareKeyModule.forRoot({ factory: new RedisPrepareKeyFactory(redis) }) or ` +
        `new MongoPrepareKeyFactory(connection) for several; with forRootAsync, return { factory } from useFactory. ` +
        `To run without reservations, pass enabled: false.`,
    );
  }
}
