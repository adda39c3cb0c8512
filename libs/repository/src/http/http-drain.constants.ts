/** The options HttpDrainModule.forRoot was given. */
export const HTTP_DRAIN_OPTIONS = Symbol('HTTP_DRAIN_OPTIONS');
