import { InMemoryOutboxStore } from '@ddd-kit/repository/outbox';
import { Counter, CounterInMemoryRepository } from './support/counter.aggregate.js';
import { outboxStoreContract } from '@ddd-kit/repository/testing';

outboxStoreContract('InMemoryOutboxStore', async () => {
  const store = new InMemoryOutboxStore();
  return {
    store,
    repository: new CounterInMemoryRepository({ aggregate: Counter, outbox: store }),
    close: async () => {},
  };
});
