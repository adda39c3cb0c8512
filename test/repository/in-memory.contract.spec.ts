import { CounterInMemoryRepository } from './support/counter.aggregate.js';
import { describeReconciliationContract } from './support/reconciliation-contract.js';
import {
  describeRepositoryContract,
  type CounterRepositoryClass,
  type RepositoryHarness,
} from '@ddd-kit/repository/testing';

const memory = async (): Promise<RepositoryHarness> => ({
  Repository: CounterInMemoryRepository as unknown as CounterRepositoryClass,
  options: () => ({}),
  close: async () => {},
});

describeRepositoryContract('InMemoryRepository', memory);
describeReconciliationContract('InMemoryRepository', memory);
