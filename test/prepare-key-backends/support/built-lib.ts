import { assertBuilt } from '../../support/built.js';

/**
 * The worker processes import the BUILT library (`@ddd-kit/prepare-key` → libs/prepare-key/dist),
 * as an application would. Fails, saying what to do, when dist is missing or older than the
 * sources, so a test never passes or fails on stale code.
 */
export function assertBuiltLib(): void {
  assertBuilt('libs/prepare-key');
}
