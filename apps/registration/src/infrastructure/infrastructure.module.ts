import { Global, Inject, Logger, Module, type DynamicModule, type OnApplicationShutdown } from '@nestjs/common';
import { Redis } from 'ioredis';
import mongoose, { type Connection } from 'mongoose';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG, MONGO_CONNECTION, REDIS_CLIENT } from './infrastructure.constants.js';

/**
 * Owns the app's connections: opened once at start (failing fast when a server does not
 * answer), shared by every module that needs them, closed last on shutdown — after the
 * modules using them (the machine ID is returned to Redis before the client goes).
 */
@Global()
@Module({})
export class InfrastructureModule implements OnApplicationShutdown {
  private readonly logger = new Logger('Infrastructure');

  constructor(
    @Inject(REDIS_CLIENT) private readonly redis: Redis | null,
    @Inject(MONGO_CONNECTION) private readonly mongo: Connection | null,
  ) {}

  static forRoot(config: AppConfig): DynamicModule {
    return {
      module: InfrastructureModule,
      providers: [
        { provide: APP_CONFIG, useValue: config },
        {
          provide: REDIS_CLIENT,
          useFactory: async () => {
            if (!config.redisUrl) return null;
            // Auto-pipelining batches the commands of concurrent requests into one round trip.
            const redis = new Redis(config.redisUrl, { lazyConnect: true, enableAutoPipelining: true, maxRetriesPerRequest: 2 });
            await redis.connect();
            return redis;
          },
        },
        {
          provide: MONGO_CONNECTION,
          useFactory: async () => {
            if (!config.mongodbUri) return null;
            return mongoose.createConnection(config.mongodbUri, { serverSelectionTimeoutMS: 5000 }).asPromise();
          },
        },
      ],
      exports: [APP_CONFIG, REDIS_CLIENT, MONGO_CONNECTION],
    };
  }

  async onApplicationShutdown(): Promise<void> {
    const closing: Promise<unknown>[] = [];
    if (this.redis) closing.push(this.redis.quit().catch(() => this.redis!.disconnect()));
    if (this.mongo) closing.push(this.mongo.close());
    await Promise.all(closing);
    this.logger.log('connections closed');
  }
}
