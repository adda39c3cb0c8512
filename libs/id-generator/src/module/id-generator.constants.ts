// Internal tokens: symbols named ID_GENERATOR_<WHAT>, described '@ddd-kit/id-generator:<what>'.
// Public tokens come from the get*Token() functions of id-generator.utils.ts.

/** The IdGeneratorModuleOptions as given (forRoot) or produced (forRootAsync). */
export const ID_GENERATOR_MODULE_OPTIONS = Symbol('@ddd-kit/id-generator:module-options');
/** The options with defaults applied, checked at bootstrap. */
export const ID_GENERATOR_RESOLVED_OPTIONS = Symbol('@ddd-kit/id-generator:resolved-options');
/** The machine-ID store the module opened itself (`machine: { redis }`), or null. */
export const ID_GENERATOR_MACHINE_ID_STORE = Symbol('@ddd-kit/id-generator:machine-id-store');
/** The IdGeneratorContext (machine ID and friends) of the module, public through getIdGeneratorContextToken(). */
export const ID_GENERATOR_CONTEXT = Symbol('@ddd-kit/id-generator:context');
/** Map of the configured named generators. */
export const ID_GENERATORS = Symbol('@ddd-kit/id-generator:generators');
/** Default machine bits: what CosIdGenerator (the default global generator) holds. */
export const DEFAULT_MACHINE_BITS = 20;
export const DEFAULT_NAMESPACE = 'default';
