// The cases every OutboxStore passes (memory, PostgreSQL, MongoDB, and yours). Events get into
// the store the way they do in production, through a repository's writes; time is the caller's
// `now`, so leases and retries are checked without waiting.
import { afterEach, beforeEach, describe } from '@jest/globals';
import { describeBadInputCases } from './outbox-store-contract/bad-input.cases.js';
import { describeClaimCases } from './outbox-store-contract/claims.cases.js';
import { describeDeadLetterFilterCases } from './outbox-store-contract/dead-letter-filters.cases.js';
import { describeHeldCases } from './outbox-store-contract/held.cases.js';
import {
  outboxStoreContractContext,
  type OutboxStoreContractTarget,
} from './outbox-store-contract/contract-context.js';
import { describeDeliveryCases } from './outbox-store-contract/delivery.cases.js';
import { describeOperatorCases } from './outbox-store-contract/operator.cases.js';
import { describeWriteCases } from './outbox-store-contract/writes.cases.js';

export type { OutboxStoreContractTarget } from './outbox-store-contract/contract-context.js';

/**
 * Defines the cases for one store. `setup` runs before every case (and `close` after it): each
 * case starts on an empty store.
 *
 * ```ts
 * describeOutboxStoreContract('my store', async () => {
 *   const store = new MyOutboxStore();
 *   return { store, repository: new MyCounterRepository({ aggregate: Counter, outbox: store }), close: async () => {} };
 * });
 * ```
 */
export function describeOutboxStoreContract(
  name: string,
  setup: () => OutboxStoreContractTarget | Promise<OutboxStoreContractTarget>,
): void {
  describe(`outbox store contract: ${name}`, () => {
    let harness: OutboxStoreContractTarget | undefined;
    const context = outboxStoreContractContext(() => {
      if (harness === undefined)
        throw new Error(`describeOutboxStoreContract('${name}'): setup did not return a target`);
      return harness;
    });
    beforeEach(async () => {
      harness = await setup();
    });
    afterEach(async () => {
      await harness?.close();
    });

    describeWriteCases(context);
    describeClaimCases(context);
    describeDeliveryCases(context);
    describeOperatorCases(context);
    describeDeadLetterFilterCases(context);
    describeHeldCases(context);
    describeBadInputCases(context);
  });
}
