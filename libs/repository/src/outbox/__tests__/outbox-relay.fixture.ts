// What the OutboxRelay specs share: an in-process store, a repository writing into it, a bus
// and a relay on a fake clock.
import { DataSyncEventBus, type DataSyncEvent, type IRepository } from '../../index.js';
import { InMemoryRepository } from '../../backends/memory/in-memory.repository.js';
import { Counter } from '../../testing/counter.aggregate.js';
import { InMemoryOutboxStore, OutboxRelay, type OutboxRelayOptions } from '../index.js';

// Writes stamp their events with the real clock; the relay's runs ahead of it, moved by hand.
export class Clock {
  now = Date.now() + 60_000;
  readonly read = () => this.now;
}

export function setup(extra: Partial<OutboxRelayOptions> = {}) {
  const clock = new Clock();
  const store = new InMemoryOutboxStore();
  const bus = new DataSyncEventBus();
  const repository = new InMemoryRepository<string, Counter>({ aggregate: Counter, outbox: store, publisher: bus });
  const received: string[] = [];
  const relay = (more: Partial<OutboxRelayOptions> = {}) =>
    new OutboxRelay({
      stores: [store],
      deliver: (a, e) => bus.deliver(a, e),
      clock: clock.read,
      backoff: { initialMs: 1000, maxMs: 8000 },
      autoStart: false,
      ...extra,
      ...more,
    });
  return { clock, store, bus, repository, received, relay };
}

export async function writeVersions(
  repository: IRepository<string, Counter>,
  id: string,
  versions: number,
): Promise<Counter> {
  const counter = new Counter(id, `label ${id}`);
  await repository.insert(counter);
  for (let v = 2; v <= versions; v++) {
    counter.increment();
    await repository.update(counter);
  }
  return counter;
}

export const tag = (e: DataSyncEvent) => `${String(e.id)}@${e.version}`;
