import { Global, Module, type DynamicModule } from '@nestjs/common';
import { HttpDrain, type HttpDrainOptions } from './http-drain.js';
import { HTTP_DRAIN_OPTIONS } from './http-drain.constants.js';
import { HttpDrainOptionsError } from '../errors.js';

/**
 * Rolling deploys without a 5xx: on `app.close()` (SIGTERM with `enableShutdownHooks()`), the
 * HTTP server stops accepting, answers every request it already received (`Connection: close`,
 * idle kept-alive connections closed), and cuts what still runs after `graceMs` — before any
 * module releases what a request needs. See HttpDrain.
 *
 *   imports: [HttpDrainModule.forRoot({ graceMs: 10_000 })]
 */
@Global()
@Module({})
export class HttpDrainModule {
  static forRoot(options: HttpDrainOptions = {}): DynamicModule {
    for (const name of ['graceMs', 'idleGraceMs'] as const) {
      const value = options[name];
      if (value !== undefined && !(Number.isInteger(value) && value >= 0))
        throw new HttpDrainOptionsError(
          `HttpDrainModule.forRoot: ${name} must be a whole number of milliseconds, 0 or more (got ${String(value)})`,
        );
    }
    return {
      module: HttpDrainModule,
      providers: [{ provide: HTTP_DRAIN_OPTIONS, useValue: options }, HttpDrain],
      exports: [HttpDrain],
    };
  }
}
