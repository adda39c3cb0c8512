import { InMemoryOutboxStore } from '@ddd-kit/repository/outbox';
import { Counter, CounterInMemoryRepository } from './support/counter.aggregate.js';
import { describeOutboxStoreContract } from '@ddd-kit/repository/testing';

describeOutboxStoreContract('InMemoryOutboxStore', async () => {
  const store = new InMemoryOutboxStore();
  return {
    store,
    repository: new CounterInMemoryRepository({ aggregate: Counter, outbox: store }),
    close: async () => {},
  };
});
