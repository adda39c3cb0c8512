// @ddd-kit/repository in memory: an aggregate, its repository injected, optimistic locking and
// a data-sync handler, with IDs from @ddd-kit/id-generator; then the subpath entries an
// in-memory user reaches for: the outbox and its relay, a read replica reconciled, the HTTP filter.
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
import { dddKitHttpStatus, DddKitExceptionFilter } from '@ddd-kit/repository/http';
import { OutboxRelay } from '@ddd-kit/repository/outbox';
import { InMemoryReadReplica, ReadReplicaReconciler } from '@ddd-kit/repository/reconciliation';
// The testing entry runs under Jest only; a consumer must still be able to type-check against it.
import type { describeOutboxStoreContract, describeRepositoryContract } from '@ddd-kit/repository/testing';

export type RepositoryContractSuites = [typeof describeRepositoryContract, typeof describeOutboxStoreContract];

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
    assert.equal(dddKitHttpStatus(new OptimisticLockError('counter', counter.id, 1)), 409);
    assert.ok(new DddKitExceptionFilter());
  } finally {
    await app.close();
  }
  await outboxAndReplica();
}

/** The outbox on, relayed by hand; a read replica fed by it, then reconciled against the repository. */
async function outboxAndReplica(): Promise<void> {
  @Module({
    imports: [
      IdGeneratorModule.forRoot({ machine: 4 }),
      RepositoryModule.forRoot({ outbox: { relay: false } }),
      RepositoryModule.forFeature([Counter]),
    ],
    providers: [Counters],
  })
  class OutboxModule {}
  const app = await NestFactory.createApplicationContext(OutboxModule, { logger: false });
  try {
    const counters = app.get(Counters);
    const counter = new Counter();
    await counters.repository.insert(counter);
    assert.deepEqual(counters.seen, []);
    assert.equal(await app.get(OutboxRelay).drain(), 1);
    assert.deepEqual(counters.seen, [1]);
    // A replica that missed the next write (its event is still in the outbox) is stale: repaired.
    const replica = new InMemoryReadReplica<string, CounterSnapshot>();
    await replica.upsert(counter.id, 1, { count: 0 });
    counter.count++;
    await counters.repository.update(counter);
    const report = await new ReadReplicaReconciler(counters.repository, replica).run();
    assert.deepEqual([report.stale, report.resynced], [1, 1]);
    assert.deepEqual(replica.get(counter.id), { id: counter.id, version: 2, snapshot: { count: 1 } });
  } finally {
    await app.close();
  }
}
