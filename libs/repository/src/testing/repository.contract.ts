// The cases every repository backend passes (memory, MongoDB, PostgreSQL, and yours): the
// write template, optimistic locking (and writes stating the version they expect), the data-sync
// hook, ids and concurrency, run against each backend's repository of the contract's Counter
// aggregate.
import { afterAll, beforeAll, describe } from '@jest/globals';
import { describeConcurrencyCases } from './repository-contract/concurrency.cases.js';
import {
  repositoryContractContext,
  type RepositoryContractOptions,
  type RepositoryContractTarget,
} from './repository-contract/contract-context.js';
import { describeDataSyncCases } from './repository-contract/data-sync.cases.js';
import { describeExpectedVersionCases } from './repository-contract/expected-version.cases.js';
import { describeIdCases } from './repository-contract/ids.cases.js';
import { describeVersionCases } from './repository-contract/versions.cases.js';

export type {
  CounterRepository,
  CounterRepositoryClass,
  CounterRepositoryOptions,
  RepositoryContractOptions,
  RepositoryContractTarget,
} from './repository-contract/contract-context.js';

/**
 * Defines the cases for one backend. `setup` runs once (beforeAll) and `close` once (afterAll);
 * every case asks `options()` for a fresh store, so the suite can share a server.
 *
 * ```ts
 * describeRepositoryContract('my store', async () => ({
 *   Repository: MyCounterRepository,
 *   options: () => ({ namespace: randomUUID() }),
 *   close: async () => {},
 * }));
 * ```
 */
export function describeRepositoryContract(
  name: string,
  setup: () => RepositoryContractTarget | Promise<RepositoryContractTarget>,
  options: RepositoryContractOptions = {},
): void {
  describe(`repository contract: ${name}`, () => {
    let harness: RepositoryContractTarget | undefined;
    const context = repositoryContractContext(options, () => {
      if (harness === undefined)
        throw new Error(`describeRepositoryContract('${name}'): setup did not return a target`);
      return harness;
    });

    beforeAll(async () => {
      harness = await setup();
    });
    afterAll(async () => {
      await harness?.close();
    });

    describeVersionCases(context);
    describeExpectedVersionCases(context);
    describeDataSyncCases(context);
    describeIdCases(context);
    describeConcurrencyCases(context);
  });
}
