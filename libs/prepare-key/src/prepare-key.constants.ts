// Internal tokens: symbols named PREPARE_KEY_<WHAT>, described '@ddd-kit/prepare-key:<what>'.
// Public tokens come from getPrepareKeyToken() (prepare-key.utils.ts).

/** The options given to forRoot, or produced by forRootAsync's factory. */
export const PREPARE_KEY_MODULE_OPTIONS = Symbol('@ddd-kit/prepare-key:module-options');
/** The Redis client and factory the module opened for `redis: { url }` (null otherwise). */
export const PREPARE_KEY_OWNED_BACKEND = Symbol('@ddd-kit/prepare-key:owned-backend');
/** Which decorated classes forRoot took, fixed when the module was built. */
export const PREPARE_KEY_SCAN = Symbol('@ddd-kit/prepare-key:scan');
/** Prefix of the token of a key name: `getPrepareKeyToken('username')` is 'PrepareKey:username'. */
export const PREPARE_KEY_TOKEN_PREFIX = 'PrepareKey:';
