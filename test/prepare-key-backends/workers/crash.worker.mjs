// An application instance that dies in the middle of a key change: reprepare(oldKey, value,
// newKey, newValue) has taken newKey and is about to release oldKey when the process is killed.
// Test seam: this PrepareKey's rollback primitive tells the test "I am between the two steps"
// and never returns, so the test can SIGKILL the process exactly there.
import { toTtlAt } from '@ddd-kit/prepare-key';
import { openBackend } from './backend.mjs';

const { backend, scope, name, oldKey, newKey, value, ttlMs } = JSON.parse(process.argv[2]);
const { factory } = await openBackend(backend, scope);
const pk = factory.create(name);
const ttlAt = ttlMs === null ? null : Date.now() + ttlMs;
pk.doRollback = () => {
  process.send({ type: 'between', ttlAt });
  return new Promise(() => {});
};
await pk.reprepare(oldKey, value, newKey, ttlAt === null ? value : toTtlAt(value, ttlAt));
process.send({ type: 'finished' }); // never reached: the seam holds the second step
