import { AggregateRoot } from '../aggregate/aggregate-root.js';

export interface CounterSnapshot {
  id: string;
  label: string;
  count: number;
  tags: string[];
}

/**
 * The aggregate the contract suites write: a labelled counter. A backend under test supplies a
 * repository for it that maps `label`, `count` and `tags` (and rebuilds it with `restore`).
 */
export class Counter extends AggregateRoot<string, CounterSnapshot> {
  label: string;
  count = 0;
  tags: string[] = [];

  constructor(id: string | undefined, label: string) {
    super(id);
    this.label = label;
  }

  static restore(id: string, label: string, count: number, tags: string[]): Counter {
    const counter = new Counter(id, label);
    counter.count = count;
    counter.tags = tags;
    return counter;
  }

  increment(by = 1): void {
    this.count += by;
  }
}
