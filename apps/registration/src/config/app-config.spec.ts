import { describe, expect, it } from '@jest/globals';
import { InvalidConfigError, loadConfig } from './app-config.js';

describe('loadConfig', () => {
  it('runs everything in memory on port 3000 when nothing is set', () => {
    expect(loadConfig({})).toEqual({
      prepareBackend: 'memory',
      repositoryBackend: 'memory',
      redisUrl: undefined,
      mongodbUri: undefined,
      databaseUrl: undefined,
      machineId: 0,
      port: 3000,
      reconcileGraceMs: undefined,
      prepareKeyPrefix: undefined,
      postgresPoolMax: undefined,
      postgresConnectionWaitMs: undefined,
      shutdownTimeoutMs: undefined,
    });
  });

  it('reads the PostgreSQL pool size, the connection wait and the shutdown bound', () => {
    expect(
      loadConfig({ POSTGRES_POOL_MAX: '4', POSTGRES_CONNECTION_WAIT_MS: '250', SHUTDOWN_TIMEOUT_MS: '3000' }),
    ).toMatchObject({ postgresPoolMax: 4, postgresConnectionWaitMs: 250, shutdownTimeoutMs: 3000 });
  });

  it('reads the backends, URLs, machine ID and port', () => {
    const config = loadConfig({
      PREPARE_BACKEND: 'Redis',
      REPOSITORY_BACKEND: 'mongo',
      REDIS_URL: 'redis://127.0.0.1:6379',
      MONGODB_URI: 'mongodb://127.0.0.1:27017/app',
      MACHINE_ID: '12',
      PORT: '8080',
    });
    expect(config).toMatchObject({ prepareBackend: 'redis', repositoryBackend: 'mongo', machineId: 12, port: 8080 });
  });

  it('leases machine IDs from Redis by default when REDIS_URL is set', () => {
    expect(loadConfig({ REDIS_URL: 'redis://localhost:6379' }).machineId).toBe('redis');
  });

  it('runs on PostgreSQL alone: reservations, users, machine IDs', () => {
    const config = loadConfig({
      PREPARE_BACKEND: 'postgres',
      REPOSITORY_BACKEND: 'postgres',
      MACHINE_ID: 'postgres',
      DATABASE_URL: 'postgres://app@127.0.0.1:5432/registration',
    });
    expect(config).toMatchObject({
      prepareBackend: 'postgres',
      repositoryBackend: 'postgres',
      machineId: 'postgres',
      databaseUrl: 'postgres://app@127.0.0.1:5432/registration',
    });
  });

  it('reads IDEMPOTENCY_SECRET, and never quotes it in a refusal', () => {
    const secret = 'k'.repeat(32);
    expect(loadConfig({ IDEMPOTENCY_SECRET: secret }).idempotencySecret).toBe(secret);
    expect(() => loadConfig({ IDEMPOTENCY_SECRET: 'hunter2-hunter2' })).toThrow(
      /^IDEMPOTENCY_SECRET: must be at least 32 bytes .*, got 15 bytes$/,
    );
  });

  it('refuses a shared repository with no machine-ID source (every instance would issue the same user IDs)', () => {
    for (const env of [
      { REPOSITORY_BACKEND: 'mongo', MONGODB_URI: 'mongodb://127.0.0.1:27017/app' },
      { REPOSITORY_BACKEND: 'postgres', DATABASE_URL: 'postgres://127.0.0.1:5432/app' },
    ]) {
      expect(() => loadConfig(env)).toThrow(/MACHINE_ID: must be set/);
    }
    expect(
      loadConfig({ REPOSITORY_BACKEND: 'mongo', MONGODB_URI: 'mongodb://127.0.0.1:27017/app', MACHINE_ID: '3' })
        .machineId,
    ).toBe(3);
  });

  const bad: Array<[Record<string, string>, string]> = [
    [{ PREPARE_BACKEND: 'etcd' }, 'PREPARE_BACKEND'],
    [{ REPOSITORY_BACKEND: 'redis' }, 'REPOSITORY_BACKEND'],
    [{ PREPARE_BACKEND: 'redis' }, 'REDIS_URL'],
    [{ PREPARE_BACKEND: 'mongo' }, 'MONGODB_URI'],
    [{ REPOSITORY_BACKEND: 'mongo', MACHINE_ID: '1' }, 'MONGODB_URI'],
    [{ REPOSITORY_BACKEND: 'postgres', MACHINE_ID: '1' }, 'DATABASE_URL'],
    [{ PREPARE_BACKEND: 'postgres' }, 'DATABASE_URL'],
    [{ MACHINE_ID: 'postgres' }, 'DATABASE_URL'],
    [{ DATABASE_URL: 'mysql://db' }, 'DATABASE_URL'],
    [{ REDIS_URL: 'localhost:6379' }, 'REDIS_URL'],
    [{ MONGODB_URI: 'http://db' }, 'MONGODB_URI'],
    [{ MACHINE_ID: '-1' }, 'MACHINE_ID'],
    [{ MACHINE_ID: '1048576' }, 'MACHINE_ID'],
    [{ MACHINE_ID: 'redis' }, 'REDIS_URL'],
    [{ PORT: '70000' }, 'PORT'],
    [{ PORT: 'http' }, 'PORT'],
    [{ PREPARE_KEY_PREFIX: 'a{b}' }, 'PREPARE_KEY_PREFIX'],
    [{ POSTGRES_POOL_MAX: '0' }, 'POSTGRES_POOL_MAX'],
    // 0 is pg's "wait for ever".
    [{ POSTGRES_CONNECTION_WAIT_MS: '0' }, 'POSTGRES_CONNECTION_WAIT_MS'],
    [{ SHUTDOWN_TIMEOUT_MS: 'soon' }, 'SHUTDOWN_TIMEOUT_MS'],
    [{ IDEMPOTENCY_SECRET: 'too short' }, 'IDEMPOTENCY_SECRET'],
  ];
  it.each(bad)('refuses %j naming %s', (env, variable) => {
    let error: unknown;
    try {
      loadConfig(env);
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(InvalidConfigError);
    expect((error as InvalidConfigError).variable).toBe(variable);
    expect((error as Error).message).toContain(variable);
  });
});
