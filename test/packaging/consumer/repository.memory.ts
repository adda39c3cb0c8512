// @ddd-kit/repository in memory: an aggregate, its repository injected, optimistic locking and
// a data-sync handler, with IDs from @ddd-kit/id-generator.
import { strict as assert } from 'node:assert';
import { Injectable, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Aggregate, IdGeneratorModule } from '@ddd-kit/id-generator';
import {
  AggregateRoot,
  InjectRepository,
  OnDataSync,
  OptimisticLockError,
  RepositoryModule,
  type DataSyncEvent,
  type IRepository,
} from '@ddd-kit/repository';

interface CounterSnapshot {
  count: number;
}

@Aggregate({ name: 'counter' })
class Counter extends AggregateRoot<string, CounterSnapshot> {
  count = 0;

  override toSnapshot(): CounterSnapshot {
    return { count: this.count };
  }
}

@Injectable()
class Counters {
  readonly seen: number[] = [];

  constructor(@InjectRepository(Counter) readonly repository: IRepository<string, Counter>) {}

  @OnDataSync(Counter)
  project(events: readonly DataSyncEvent<string, CounterSnapshot>[]): void {
    for (const event of events) this.seen.push(event.version);
  }
}

@Module({
  imports: [
    IdGeneratorModule.forRoot({ machine: 3 }),
    RepositoryModule.forRoot(),
    RepositoryModule.forFeature([Counter]),
  ],
  providers: [Counters],
})
class AppModule {}

export async function run(): Promise<void> {
  const app = await NestFactory.createApplicationContext(AppModule, { logger: false });
  try {
    const counters = app.get(Counters);
    const counter = new Counter();
    await counters.repository.insert(counter);
    assert.match(counter.id, /^[0-9A-Za-z]{15}$/);
    const [a, b] = [await counters.repository.findById(counter.id), await counters.repository.findById(counter.id)];
    a!.count++;
    await counters.repository.update(a!);
    b!.count++;
    await assert.rejects(counters.repository.update(b!), OptimisticLockError);
    assert.equal(await counters.repository.currentVersion(counter.id), 2);
    assert.deepEqual(counters.seen, [1, 2]);
  } finally {
    await app.close();
  }
}
