import type { PrepareKeyClass } from './interfaces/preparable-key-declaration.interface.js';
import type { PrepareKey } from './prepare-key.js';
import { PRIMITIVE_NAMES, primitivesOf } from './prepare-key.primitives.js';

/**
 * The object injected for a declared key class: an instance of that class (so
 * `instanceof UsernamePrepareKey` and `instanceof PrepareKey` hold and its helper methods
 * work, `this.prepare(...)` included) whose backend primitives (`doPrepare`, `doRollback`, …)
 * and clock forward to `backend`, the backend's key of that name.
 *
 * Only the primitives are forwarded. The contract methods and their compositions run on this
 * object, from PrepareKey's prototype, so a method the declared class overrides (say `prepare`
 * normalising keys) is the one every composition calls: `usingPrepare`, the key change,
 * `get`. A plain object with forwarding methods rather than an ES Proxy: no trap on every
 * property access, and nothing for `await` to mistake for a thenable.
 */
export function createPrepareKeyProxy<T extends PrepareKey<any>>(
  declared: PrepareKeyClass<T>,
  backend: PrepareKey<any>,
): T {
  const Declared = declared as unknown as new () => object;
  const Forwarding = class extends Declared {};
  Object.defineProperty(Forwarding, 'name', { value: declared.name });

  const primitives = primitivesOf(backend);
  for (const primitive of PRIMITIVE_NAMES) {
    const target = primitives[primitive] as (...args: any[]) => unknown;
    const forward = (...args: any[]) => target.apply(backend, args);
    Object.defineProperty(Forwarding.prototype, primitive, { value: forward, writable: true, configurable: true });
  }

  const instance = new Forwarding();
  // After construction, so a class that assigns `name` itself still reports the backend's name.
  Object.defineProperty(instance, 'name', { value: backend.name, enumerable: true });
  Object.defineProperty(instance, 'transactionScope', { value: backend.transactionScope });
  return instance as T;
}
