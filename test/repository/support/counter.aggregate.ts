import {
  InMemoryRepository,
  MongooseRepository,
  PostgresRepository,
  type StoredDocument,
  type StoredRow,
} from '@ddd-kit/repository';
import { Counter } from '@ddd-kit/repository/testing';

// The contract suites' aggregate, and its repository on each built-in backend.
export { Counter, type CounterSnapshot } from '@ddd-kit/repository/testing';

export type CounterFields = { label: string; count: number; tags: string[] };

export class CounterMongooseRepository extends MongooseRepository<string, Counter, CounterFields> {
  protected toDocument(counter: Counter): CounterFields {
    return { label: counter.label, count: counter.count, tags: [...counter.tags] };
  }

  protected toAggregate(document: StoredDocument<string, CounterFields>): Counter {
    return Counter.restore(document._id, document.label, document.count, document.tags);
  }

  /** Deletes straight in the collection, the way a script or a manual fix would. */
  async deleteBehindTheRepository(id: string): Promise<void> {
    await (await this.collection()).deleteOne({ _id: id });
  }
}

export class CounterInMemoryRepository extends InMemoryRepository<string, Counter> {
  /** Deletes without the write flow (no hook, no event), like a delete outside `remove`. */
  async deleteBehindTheRepository(id: string): Promise<void> {
    const counter = await this.findById(id);
    if (counter) await this.doRemove(counter);
  }
}

/** Counters as rows of `counters` (tests pass `{ table }` to give each repository its own). */
export class CounterPostgresRepository extends PostgresRepository<string, Counter, CounterFields> {
  protected readonly table: string = 'counters';
  protected readonly columns = { label: 'text NOT NULL', count: 'integer NOT NULL', tags: 'jsonb NOT NULL' };

  protected toRow(counter: Counter): CounterFields {
    return { label: counter.label, count: counter.count, tags: [...counter.tags] };
  }

  protected toAggregate(row: StoredRow<string, CounterFields>): Counter {
    return Counter.restore(row.id, row.label, row.count, row.tags);
  }

  /** Deletes straight in the table, the way a script or a manual fix would. */
  async deleteBehindTheRepository(id: string): Promise<void> {
    await this.query({ text: `DELETE FROM ${this.qualifiedTable} WHERE id = $1`, values: [id] });
  }
}
