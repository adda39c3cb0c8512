import { CounterInMemoryRepository } from './support/counter.aggregate.js';
import { describeReconciliationContract } from './support/reconciliation-contract.js';
import {
  describeRepositoryContract,
  type CounterRepositoryClass,
  type RepositoryContractTarget,
} from '@ddd-kit/repository/testing';

const memory = async (): Promise<RepositoryContractTarget> => ({
  Repository: CounterInMemoryRepository as unknown as CounterRepositoryClass,
  options: () => ({}),
  close: async () => {},
});

describeRepositoryContract('InMemoryRepository', memory);
describeReconciliationContract('InMemoryRepository', memory);
