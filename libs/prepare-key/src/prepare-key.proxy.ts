import type { PrepareKeyClass } from './interfaces/preparable-key-declaration.interface.js';
import { PREPARE_KEY_CONTRACT_METHODS } from './prepare-key.constants.js';
import { PrepareKey } from './prepare-key.js';
import { PRIMITIVE_NAMES, primitivesOf } from './prepare-key.primitives.js';

/**
 * The object injected for a declared key class: an instance of that class (so
 * `instanceof UsernamePrepareKey` and `instanceof PrepareKey` hold and its helper methods
 * work, `this.prepare(...)` included) whose contract methods forward to `backend`, the
 * backend's key of that name. Arguments are forwarded as received, so the 2-, 3- and
 * 4-argument forms of `reprepare` keep their meaning.
 *
 * A contract method the declared class overrides itself (say, to normalise keys before
 * `super.prepare`) is kept; its `super` call runs the shared composition, whose primitives
 * are forwarded to the backend too. A plain object with forwarding methods rather than an
 * ES Proxy: no trap on every property access, and nothing for `await` to mistake for a
 * thenable.
 */
export function createPrepareKeyProxy<T extends PrepareKey<any>>(declared: PrepareKeyClass<T>, backend: PrepareKey<any>): T {
  const Declared = declared as unknown as new () => object;
  const Forwarding = class extends Declared {};
  Object.defineProperty(Forwarding, 'name', { value: declared.name });

  const methods: Record<string, (...args: any[]) => unknown> = {};
  for (const method of PREPARE_KEY_CONTRACT_METHODS) {
    if (ownerOf(declared.prototype, method) !== PrepareKey.prototype) continue;
    const target = backend[method] as (...args: any[]) => unknown;
    methods[method] = (...args) => target.apply(backend, args);
  }
  const primitives = primitivesOf(backend);
  for (const primitive of PRIMITIVE_NAMES) {
    const target = primitives[primitive] as (...args: any[]) => unknown;
    methods[primitive] = (...args) => target.apply(backend, args);
  }
  for (const [method, value] of Object.entries(methods)) {
    Object.defineProperty(Forwarding.prototype, method, { value, writable: true, configurable: true });
  }

  const instance = new Forwarding();
  // After construction, so a class that assigns `name` itself still reports the backend's name.
  Object.defineProperty(instance, 'name', { value: backend.name, enumerable: true });
  return instance as T;
}

function ownerOf(prototype: object, property: string): object | null {
  for (let p: object | null = prototype; p; p = Object.getPrototypeOf(p)) {
    if (Object.prototype.hasOwnProperty.call(p, property)) return p;
  }
  return null;
}
