// Jest's Node environment, plus clean-up: when a test file is done (its tests, its afterAll
// hooks, the worker processes they stopped), everything it created on the test servers under
// a `uniqueName()` is removed (test/support/cleanup.js), so runs against shared servers
// (REDIS_URL, MONGODB_URI, DATABASE_URL from the environment) leave nothing behind.
import { TestEnvironment } from 'jest-environment-node';
import { cleanUpNames } from './cleanup.js';

/** Where `uniqueName()` records the names it hands out, on the test file's global object. */
export const NAMES_KEY = '__DDD_KIT_TEST_NAMES__';

export default class DddKitTestEnvironment extends TestEnvironment {
  async teardown() {
    const names = [...(this.global[NAMES_KEY] ?? [])];
    try {
      const removed = await cleanUpNames(names);
      if (removed.errors.length > 0) {
        process.stderr.write(`[ddd-kit test clean-up] ${this.testPath ?? ''}: ${removed.errors.join('; ')}\n`);
      }
    } finally {
      await super.teardown();
    }
  }

  constructor(config, context) {
    super(config, context);
    this.testPath = context.testPath;
  }
}
