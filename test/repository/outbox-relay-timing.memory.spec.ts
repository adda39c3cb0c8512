import { InMemoryOutboxStore } from '@ddd-kit/repository/outbox';
import { Counter, CounterInMemoryRepository } from './support/counter.aggregate.js';
import { describeRelayTiming } from './support/outbox-relay-timing.support.js';

describeRelayTiming('InMemoryOutboxStore', async () => {
  const store = new InMemoryOutboxStore();
  const repository = new CounterInMemoryRepository({ aggregate: Counter, outbox: store });
  return { store, repository, wakes: true, close: async () => {} };
});
