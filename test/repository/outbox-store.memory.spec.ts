import { InMemoryOutboxStore } from '@ddd-kit/repository';
import { Counter, CounterInMemoryRepository } from './support/counter.aggregate.js';
import { outboxStoreContract } from './support/outbox-store-contract.js';

outboxStoreContract('InMemoryOutboxStore', async () => {
  const store = new InMemoryOutboxStore();
  return {
    store,
    repository: new CounterInMemoryRepository({ aggregate: Counter, outbox: store }),
    close: async () => {},
  };
});
