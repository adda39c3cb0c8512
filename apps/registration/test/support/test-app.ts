import { Test, type TestingModuleBuilder } from '@nestjs/testing';
import type { INestApplication } from '@nestjs/common';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { randomUUID } from 'node:crypto';
import { AppModule } from '../../src/app.module.js';
import { configureApp } from '../../src/common/configure-app.js';
import type { AppConfig } from '../../src/config/app-config.js';
import { mongoLabel, mongoUri, redisUrl, uniqueName } from '../../../../test/support/servers.js';

export interface Backend {
  label: string;
  config: () => AppConfig;
}

/** Everything in memory: what `npm start` runs with nothing configured. */
export const memoryBackend: Backend = {
  label: 'memory',
  config: () => ({ prepareBackend: 'memory', repositoryBackend: 'memory', machineId: 0, port: 0 }),
};

/**
 * Names on Redis, users and the read model in MongoDB, machine ID leased from Redis. Each call
 * is a deployment of its own: its own database and its own Redis key prefix, so suites running
 * side by side (reconciliation above all) never see each other's users or names.
 */
export const sharedBackend: Backend = {
  label: `Redis + ${mongoLabel()}`,
  config: () => {
    const name = uniqueName('registration');
    return {
      prepareBackend: 'redis',
      repositoryBackend: 'mongo',
      redisUrl: redisUrl(),
      mongodbUri: `${mongoUri().replace(/\/+$/, '')}/${name}`,
      prepareKeyPrefix: `${name}:prepare`,
      machineId: 'redis',
      port: 0,
    };
  },
};

export const backends = [memoryBackend, sharedBackend];

/** The environment that makes the built app (`dist/main.js`, `dist/reconcile.js`) run on `config`'s Redis and MongoDB. */
export function sharedBackendEnv(config: AppConfig, machineId = 'redis'): Record<string, string | undefined> {
  return {
    PREPARE_BACKEND: 'redis',
    REPOSITORY_BACKEND: 'mongo',
    REDIS_URL: config.redisUrl,
    MONGODB_URI: config.mongodbUri,
    PREPARE_KEY_PREFIX: config.prepareKeyPrefix,
    MACHINE_ID: machineId,
  };
}

/** The real app over HTTP, optionally with providers overridden (to inject failures). */
export async function createTestApp(
  config: AppConfig,
  customize: (builder: TestingModuleBuilder) => TestingModuleBuilder = (b) => b,
): Promise<INestApplication> {
  const moduleRef = await customize(Test.createTestingModule({ imports: [AppModule.forRoot(config)] })).compile();
  const app = configureApp(
    moduleRef.createNestApplication<NestExpressApplication>({ bodyParser: false, logger: ['error'] }),
  );
  await app.init();
  return app;
}

/**
 * A username no other test (or earlier run against the same Redis) uses: 3–32 characters of
 * the allowed set.
 */
export function freshName(prefix = 'u'): string {
  return `${prefix}${randomUUID().replace(/-/g, '').slice(0, 12)}`;
}

/** The `Authorization` header that lets a request rename or delete `user`: the secret its registration returned. */
export const bearer = (user: { secret: string }): string => `Bearer ${user.secret}`;

/** A registration's body as every later read shows the user: without the one-time secret. */
export function viewOf<T extends { secret?: unknown }>(registered: T): Omit<T, 'secret'> {
  const { secret: _secret, ...view } = registered;
  return view;
}

/**
 * A registration body of only the one valid field, padded with JSON whitespace to exactly
 * `bytes`: what it asks for is valid, so only its size can make the service refuse it.
 */
export function paddedBody(username: string, bytes: number): string {
  const head = `{"username":${JSON.stringify(username)}`;
  return `${head}${' '.repeat(bytes - head.length - 1)}}`;
}
