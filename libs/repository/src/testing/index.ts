// `@ddd-kit/repository/testing`: the contract suites a repository backend (and its outbox
// store) runs, yours included. They define Jest cases: @jest/globals is an optional peer that
// only this entry needs.
export { Counter, type CounterSnapshot } from './counter.aggregate.js';
export * from './repository.contract.js';
export * from './outbox-store.contract.js';
