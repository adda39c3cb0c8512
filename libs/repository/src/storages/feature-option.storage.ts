// Which forFeature options (beyond `aggregate` and `repository`) a repository class takes, as
// its backend's base class declares them (MongooseRepository takes `collection`,
// PostgresRepository `table`): read when forFeature checks its entries, where they are declared.
const declared = new Map<Function, Set<string>>();

/** Declares that `repositoryClass` and its subclasses take the forFeature option `option`. */
export function declareFeatureOption(repositoryClass: Function, option: string): void {
  const options = declared.get(repositoryClass) ?? new Set<string>();
  options.add(option);
  declared.set(repositoryClass, options);
}

/** True when `repositoryClass` (or a class it extends) takes `option`. */
export function takesFeatureOption(repositoryClass: Function | undefined, option: string): boolean {
  for (let c = repositoryClass; typeof c === 'function' && c !== Function.prototype; c = Object.getPrototypeOf(c)) {
    if (declared.get(c)?.has(option)) return true;
  }
  return false;
}

/** The names of the classes that declared `option`. */
export function classesTaking(option: string): string[] {
  return [...declared].filter(([, options]) => options.has(option)).map(([c]) => c.name);
}
