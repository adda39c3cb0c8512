import { Module, type DynamicModule } from '@nestjs/common';
import { InvalidConfigError, loadConfig, type AppConfig } from './config/app-config.js';
import { RegistrationModule } from './registration.module.js';

/** Stands in for the service when the environment is invalid: its bootstrap fails with the reason. */
@Module({})
class InvalidConfigModule {}

function fromEnvironment(): DynamicModule {
  try {
    return RegistrationModule.forRoot(loadConfig());
  } catch (err) {
    if (!(err instanceof InvalidConfigError)) throw err;
    return {
      module: InvalidConfigModule,
      providers: [{ provide: InvalidConfigError, useFactory: () => Promise.reject(err) }],
    };
  }
}

/**
 * The application's root module, configured from the environment: `imports: [AppModule]` is
 * the whole service. A bad environment does not throw on import; it fails the bootstrap with
 * the error that names the variable. `AppModule.forRoot(config)` takes an explicit config.
 */
@Module({ imports: [fromEnvironment()] })
export class AppModule {
  /** The service on an explicit configuration (not `module: AppModule`: Nest would merge in the static imports too). */
  static forRoot(config: AppConfig = loadConfig()): DynamicModule {
    return RegistrationModule.forRoot(config);
  }
}
