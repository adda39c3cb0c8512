/** The resolved IdGeneratorModuleOptions. */
export const ID_GENERATOR_MODULE_OPTIONS = 'DDD_KIT_ID_GENERATOR_MODULE_OPTIONS';
/** The IdGeneratorContext (machine ID and friends) of the module. */
export const ID_GENERATOR_CONTEXT = 'DDD_KIT_ID_GENERATOR_CONTEXT';
/** Map of the configured named generators. */
export const ID_GENERATORS = 'DDD_KIT_ID_GENERATORS';
/** Default machine bits: what CosIdGenerator (the default global generator) holds. */
export const DEFAULT_MACHINE_BITS = 20;
export const DEFAULT_NAMESPACE = 'default';
