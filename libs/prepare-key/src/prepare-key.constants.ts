/** The options given to forRoot, or produced by forRootAsync's factory. */
export const PREPARE_KEY_MODULE_OPTIONS = Symbol('PREPARE_KEY_MODULE_OPTIONS');
/** The Redis client and factory the module opened for `redis: { url }` (null otherwise). */
export const PREPARE_KEY_OWNED_BACKEND = Symbol('PREPARE_KEY_OWNED_BACKEND');
/** Which decorated classes forRoot took, fixed when the module was built. */
export const PREPARE_KEY_SCAN = Symbol('PREPARE_KEY_SCAN');
/** Prefix of the token of a key name: `getPrepareKeyToken('username')` is 'PrepareKey:username'. */
export const PREPARE_KEY_TOKEN_PREFIX = 'PrepareKey:';
