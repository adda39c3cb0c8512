import type { FactoryProvider, Provider } from '@nestjs/common';
import { PrepareKeyFactoryMissingError } from './errors.js';
import type { PrepareKeyClass, PreparableKeyDeclaration } from './interfaces/preparable-key-declaration.interface.js';
import type { PrepareKeyFeature } from './interfaces/prepare-key-module-options.interface.js';
import { PrepareKeyRegistry } from './prepare-key.registry.js';
import { checkedName, declarationOf, getPrepareKeyToken } from './prepare-key.utils.js';

/**
 * The providers of one key class: the class itself (the injected object), and two aliases
 * of it — the key name's token (`@InjectPrepareKey('username')`) and the class simple name
 * (`@Inject('UsernamePrepareKey')`) — so every route reaches the same object.
 */
export function createClassProviders(declaration: PreparableKeyDeclaration, requireRoot = false): Provider[] {
  const { target, name } = declaration;
  return [
    {
      provide: target,
      useFactory: (registry?: PrepareKeyRegistry) =>
        registryOrFail(registry, `'${name}' (${target.name})`, requireRoot).forClass(target),
      inject: [{ token: PrepareKeyRegistry, optional: true }],
    } satisfies FactoryProvider,
    { provide: getPrepareKeyToken(name), useExisting: target },
    { provide: target.name, useExisting: target },
  ];
}

/** forFeature: key classes (as above) and bare names (a plain PrepareKey under the name's token). */
export function createFeatureProviders(features: PrepareKeyFeature[]): Provider[] {
  return features.flatMap((feature): Provider[] => {
    if (typeof feature !== 'string') return createClassProviders(declarationOf(feature as PrepareKeyClass), true);
    const name = checkedName(feature);
    return [
      {
        provide: getPrepareKeyToken(name),
        useFactory: (registry?: PrepareKeyRegistry) => registryOrFail(registry, `'${name}'`, true).forName(name),
        inject: [{ token: PrepareKeyRegistry, optional: true }],
      },
    ];
  });
}

function registryOrFail(
  registry: PrepareKeyRegistry | undefined,
  key: string,
  fromFeature: boolean,
): PrepareKeyRegistry {
  if (!registry) throw new PrepareKeyFactoryMissingError([key], fromFeature ? 'no-root-module' : 'no-factory');
  return registry;
}
