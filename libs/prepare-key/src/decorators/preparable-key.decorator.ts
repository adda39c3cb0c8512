import { PrepareKeyDeclarationError } from '../errors.js';
import type { PrepareKeyClass } from '../interfaces/preparable-key-declaration.interface.js';
import { checkedName, describeValue, isPrepareKeyClass } from '../prepare-key.utils.js';
import { PreparableKeyStorage } from '../storages/preparable-key.storage.js';

/**
 * Declares a key space. The class is an (abstract) subclass of PrepareKey<V>; it may add
 * helper methods on top of the contract. PrepareKeyModule.forRoot makes it injectable — by
 * class, by `@InjectPrepareKey(name)` and by its simple class name — as an instance of the
 * class whose contract methods reach the backend's key of that name.
 *
 * ```ts
 * @PreparableKey('username')            // blank: the simple class name, 'UsernamePrepareKey'
 * export abstract class UsernamePrepareKey extends PrepareKey<UsernameIndex> {}
 * ```
 */
export function PreparableKey(name?: string): ClassDecorator {
  return (target) => {
    if (!isPrepareKeyClass(target)) {
      throw new PrepareKeyDeclarationError(
        `@PreparableKey() on ${describeValue(target)}: the class must extend PrepareKey<V>`,
      );
    }
    const blank = name === undefined || (typeof name === 'string' && name.trim() === '');
    PreparableKeyStorage.add({
      target: target as unknown as PrepareKeyClass,
      name: checkedName(blank ? target.name : (name as string)),
    });
  };
}
