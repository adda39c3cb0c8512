/**
 * One value per process under `key`, whatever number of copies of a ddd-kit package are
 * installed: kept on globalThis under a registered symbol (the way @opentelemetry/api keeps its
 * registry), so two copies of a library share one registry, one ambient transaction, one
 * declaration store.
 */
export function processWide<T>(key: string, create: () => T): T {
  const symbol = Symbol.for(`@ddd-kit/${key}`);
  const holder = globalThis as unknown as Record<symbol, T | undefined>;
  return (holder[symbol] ??= create());
}
