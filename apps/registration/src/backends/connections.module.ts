import { Global, Inject, Logger, Module, type DynamicModule, type OnApplicationShutdown } from '@nestjs/common';
import type { AppConfig } from '../config/app-config.js';
import type { Backend, StoreConnection } from './backend.js';

const OPENED = Symbol('OPENED_CONNECTIONS');

interface Opened {
  store: StoreConnection;
  connection: unknown;
}

/**
 * Owns the connections of the backends chosen, and only those: each opened once at start
 * (a server that does not answer fails the start), shared by every backend on that store, and
 * closed on shutdown. RegistrationModule imports it first, so it closes last: after the
 * modules using the connections (the machine ID is returned to Redis before the client goes).
 */
@Global()
@Module({})
export class ConnectionsModule implements OnApplicationShutdown {
  constructor(@Inject(OPENED) private readonly opened: Opened[]) {}

  static forRoot(config: AppConfig, backends: readonly Backend[]): DynamicModule {
    const stores = [...new Set(backends.map((backend) => backend.connection))].filter((store) => store !== undefined);
    return {
      module: ConnectionsModule,
      providers: [
        ...stores.map((store) => ({ provide: store.token, useFactory: () => store.open(config) })),
        {
          provide: OPENED,
          inject: stores.map((store) => store.token),
          useFactory: (...connections: unknown[]): Opened[] =>
            stores.map((store, i) => ({ store, connection: connections[i] })),
        },
      ],
      exports: stores.map((store) => store.token),
    };
  }

  async onApplicationShutdown(): Promise<void> {
    await Promise.all(this.opened.map(({ store, connection }) => store.close(connection)));
    new Logger('Connections').log('connections closed');
  }
}
