/**
 * The sample's configuration, read once from the environment and validated at start: a
 * bad variable stops the process with a message naming it. With nothing set, everything
 * runs in memory on port 3000.
 */
export type PrepareBackend = 'memory' | 'redis' | 'mongo' | 'postgres';
export type RepositoryBackend = 'memory' | 'mongo' | 'postgres';

export interface AppConfig {
  prepareBackend: PrepareBackend;
  repositoryBackend: RepositoryBackend;
  redisUrl?: string;
  mongodbUri?: string;
  databaseUrl?: string;
  /** A fixed machine ID, or the store to lease one from (RedisMachineIdDistributor, PostgresMachineIdDistributor). */
  machineId: number | 'redis' | 'postgres';
  port: number;
  /** Start of every Redis reservation key, so that several apps (or test runs) can share one Redis. */
  prepareKeyPrefix?: string;
  /** Reservations younger than this are spared by reconciliation (in-flight requests). */
  reconcileGraceMs?: number;
  /** Connections of the PostgreSQL pool (default 10). */
  postgresPoolMax?: number;
  /** How long a request waits for a free PostgreSQL connection before it is a 503 (default 5 s). */
  postgresConnectionWaitMs?: number;
  /** On SIGTERM, how long requests already received have to finish before the rest are cut (default 10 s). */
  shutdownTimeoutMs?: number;
  /**
   * IDEMPOTENCY_SECRET: what a kept response's secret is encrypted under, with the caller's key
   * (at least 32 characters, the same on every instance). Unset: a random one per process, so
   * a repeat reaching another instance (or a restarted one) cannot have the secret back.
   */
  idempotencySecret?: string;
  /**
   * Run the outbox relay in this process (default true, on a shared repository). Not from the
   * environment: `npm run reconcile` turns it off, a one-off job has no events to deliver.
   */
  outboxRelay?: boolean;
  /**
   * A test seam (OUTBOX_TEST_PARK=after-claim): the outbox relay stops for good right after its
   * first claim, before any handler ran — where a crash test kills the process.
   */
  outboxParkAfterClaim?: boolean;
}

export class InvalidConfigError extends Error {
  override readonly name = 'InvalidConfigError';
  constructor(
    readonly variable: string,
    message: string,
  ) {
    super(`${variable}: ${message}`);
  }
}

function oneOf<T extends string>(env: NodeJS.ProcessEnv, variable: string, allowed: readonly T[], fallback: T): T {
  const raw = env[variable]?.trim();
  if (!raw) return fallback;
  const value = raw.toLowerCase() as T;
  if (!allowed.includes(value)) {
    throw new InvalidConfigError(variable, `must be one of ${allowed.join(', ')}, got '${raw}'`);
  }
  return value;
}

function url(env: NodeJS.ProcessEnv, variable: string, protocols: string[]): string | undefined {
  const raw = env[variable]?.trim();
  if (!raw) return undefined;
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new InvalidConfigError(variable, `is not a URL: '${raw}'`);
  }
  if (!protocols.includes(parsed.protocol)) {
    throw new InvalidConfigError(
      variable,
      `must start with ${protocols.map((p) => `${p}//`).join(' or ')}, got '${raw}'`,
    );
  }
  return raw;
}

function integer(env: NodeJS.ProcessEnv, variable: string, min: number, max: number): number | undefined {
  const raw = env[variable]?.trim();
  if (!raw) return undefined;
  if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
    throw new InvalidConfigError(variable, `must be an integer from ${min} to ${max}, got '${raw}'`);
  }
  return Number(raw);
}

/** What @ddd-kit/idempotency asks of the secret it encrypts kept secrets under. */
export const MIN_IDEMPOTENCY_SECRET_BYTES = 32;

/** 20 bits: the machine part of the CosId global generator. */
export const MAX_MACHINE_ID = (1 << 20) - 1;

export function loadConfig(env: NodeJS.ProcessEnv = process.env): AppConfig {
  const prepareBackend = oneOf(env, 'PREPARE_BACKEND', ['memory', 'redis', 'mongo', 'postgres'] as const, 'memory');
  const repositoryBackend = oneOf(env, 'REPOSITORY_BACKEND', ['memory', 'mongo', 'postgres'] as const, 'memory');
  const redisUrl = url(env, 'REDIS_URL', ['redis:', 'rediss:']);
  const mongodbUri = url(env, 'MONGODB_URI', ['mongodb:', 'mongodb+srv:']);
  const databaseUrl = url(env, 'DATABASE_URL', ['postgres:', 'postgresql:']);
  const port = integer(env, 'PORT', 0, 65535) ?? 3000;

  const rawMachine = env.MACHINE_ID?.trim();
  let machineId: number | 'redis' | 'postgres';
  if (rawMachine?.toLowerCase() === 'redis' || rawMachine?.toLowerCase() === 'postgres')
    machineId = rawMachine.toLowerCase() as 'redis' | 'postgres';
  else if (rawMachine) machineId = integer(env, 'MACHINE_ID', 0, MAX_MACHINE_ID)!;
  // Instances sharing Redis lease distinct machine IDs by default.
  else if (redisUrl) machineId = 'redis';
  else if (repositoryBackend !== 'memory') {
    // Instances sharing a repository must not share a machine ID: their user IDs would collide.
    throw new InvalidConfigError(
      'MACHINE_ID',
      `must be set when REPOSITORY_BACKEND=${repositoryBackend} is shared by instances: 'redis' or 'postgres' to lease one per instance, or a number distinct for every instance`,
    );
  }
  // A lone in-memory process.
  else machineId = 0;

  // Each backend chosen needs the URL of its store.
  const stores: Record<string, { variable: string; url?: string; example: string } | undefined> = {
    redis: { variable: 'REDIS_URL', url: redisUrl, example: 'redis://127.0.0.1:6379' },
    mongo: { variable: 'MONGODB_URI', url: mongodbUri, example: 'mongodb://127.0.0.1:27017/registration' },
    postgres: { variable: 'DATABASE_URL', url: databaseUrl, example: 'postgres://user@127.0.0.1:5432/registration' },
  };
  const chosen = { PREPARE_BACKEND: prepareBackend, REPOSITORY_BACKEND: repositoryBackend, MACHINE_ID: machineId };
  for (const [variable, backend] of Object.entries(chosen)) {
    const store = stores[String(backend)];
    if (store && !store.url) {
      throw new InvalidConfigError(store.variable, `is required when ${variable}=${backend} (e.g. ${store.example})`);
    }
  }
  const reconcileGraceMs = integer(env, 'RECONCILE_GRACE_MS', 0, 7 * 24 * 3600_000);
  const postgresPoolMax = integer(env, 'POSTGRES_POOL_MAX', 1, 1_000);
  // 0 would be pg's "wait for ever": the very hang this bound is there to prevent.
  const postgresConnectionWaitMs = integer(env, 'POSTGRES_CONNECTION_WAIT_MS', 1, 600_000);
  const shutdownTimeoutMs = integer(env, 'SHUTDOWN_TIMEOUT_MS', 0, 600_000);
  const prepareKeyPrefix = env.PREPARE_KEY_PREFIX?.trim() || undefined;
  if (prepareKeyPrefix !== undefined && !/^[A-Za-z0-9_.:-]{1,100}$/.test(prepareKeyPrefix)) {
    throw new InvalidConfigError(
      'PREPARE_KEY_PREFIX',
      `must be 1–100 characters from A-Z a-z 0-9 _ . : -, got '${prepareKeyPrefix}'`,
    );
  }
  const idempotencySecret = env.IDEMPOTENCY_SECRET?.trim() || undefined;
  if (idempotencySecret !== undefined && Buffer.byteLength(idempotencySecret) < MIN_IDEMPOTENCY_SECRET_BYTES) {
    // Never quoted back: it is a secret.
    throw new InvalidConfigError(
      'IDEMPOTENCY_SECRET',
      `must be at least ${MIN_IDEMPOTENCY_SECRET_BYTES} bytes (e.g. 32 random bytes in base64), got ${Buffer.byteLength(idempotencySecret)} bytes`,
    );
  }
  return {
    prepareBackend,
    repositoryBackend,
    redisUrl,
    mongodbUri,
    databaseUrl,
    machineId,
    port,
    reconcileGraceMs,
    prepareKeyPrefix,
    postgresPoolMax,
    postgresConnectionWaitMs,
    shutdownTimeoutMs,
    ...(idempotencySecret !== undefined ? { idempotencySecret } : {}),
    ...(oneOf(env, 'OUTBOX_TEST_PARK', ['none', 'after-claim'] as const, 'none') === 'after-claim'
      ? { outboxParkAfterClaim: true }
      : {}),
  };
}

/** For entry points: the configuration, or the process stops with a message naming the bad variable. */
export function loadConfigOrExit(env: NodeJS.ProcessEnv = process.env): AppConfig {
  try {
    return loadConfig(env);
  } catch (err) {
    if (!(err instanceof InvalidConfigError)) throw err;
    console.error(`Invalid configuration: ${err.message}`);
    process.exit(1);
  }
}
