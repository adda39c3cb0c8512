import { Global, Inject, Logger, Module, type DynamicModule, type OnApplicationShutdown } from '@nestjs/common';
import { Redis } from 'ioredis';
import mongoose, { type Connection } from 'mongoose';
import type { Pool } from 'pg';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG, MONGO_CONNECTION, POSTGRES_POOL, REDIS_CLIENT } from './infrastructure.constants.js';

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
    @Inject(POSTGRES_POOL) private readonly postgres: Pool | null,
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
            const redis = new Redis(config.redisUrl, {
              lazyConnect: true,
              enableAutoPipelining: true,
              maxRetriesPerRequest: 2,
            });
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
        {
          provide: POSTGRES_POOL,
          useFactory: async () => {
            if (!config.databaseUrl) return null;
            // Loaded only here: deployments without PostgreSQL need not have pg.
            const { default: pg } = await import('pg');
            const pool = new pg.Pool({ connectionString: config.databaseUrl, max: 10, query_timeout: 10_000 });
            // An idle client losing its connection emits 'error'; the pool replaces it.
            pool.on('error', (error) => new Logger('Infrastructure').warn(`PostgreSQL: ${error.message}`));
            try {
              await pool.query('SELECT 1');
            } catch (error) {
              await pool.end().catch(() => undefined);
              throw error;
            }
            return pool;
          },
        },
      ],
      exports: [APP_CONFIG, REDIS_CLIENT, MONGO_CONNECTION, POSTGRES_POOL],
    };
  }

  async onApplicationShutdown(): Promise<void> {
    const closing: Promise<unknown>[] = [];
    if (this.redis) closing.push(this.redis.quit().catch(() => this.redis!.disconnect()));
    if (this.mongo) closing.push(this.mongo.close());
    if (this.postgres) closing.push(this.postgres.end());
    await Promise.all(closing);
    this.logger.log('connections closed');
  }
}
