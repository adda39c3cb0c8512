import { CounterInMemoryRepository } from './support/counter.aggregate.js';
import { describeReconciliationContract } from './support/reconciliation-contract.js';
import {
  describeRepositoryContract,
  type CounterRepositoryClass,
  type RepositoryHarness,
} from './support/repository-contract.js';

const memory = async (): Promise<RepositoryHarness> => ({
  Repository: CounterInMemoryRepository as unknown as CounterRepositoryClass,
  options: () => ({}),
  close: async () => {},
});

describeRepositoryContract('InMemoryRepository', memory);
describeReconciliationContract('InMemoryRepository', memory);
