import { afterAll, afterEach, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { Logger } from '@nestjs/common';
import { Redis } from 'ioredis';
import { OperationTimeoutError } from '@ddd-kit/core';
import { openRedis } from '@ddd-kit/core/redis';
import { RedisMachineIdDistributor, RedisSegmentSource } from '@ddd-kit/id-generator';
import { RedisIdempotencyStore } from '@ddd-kit/idempotency';
import { RedisPrepareKeyFactory } from '@ddd-kit/prepare-key';
import { startRedisServer } from '../support/server-provider.js';
import { uniqueName } from '../support/servers.js';
import { waitFor } from '../support/wait.js';

/** The deadline the stores below are given: short, so that the suite stays quick. */
const DEADLINE_MS = 300;
/**
 * What the tests assert: an operation on a silent Redis is over within this long. Ten times the
 * deadline, because what is proven is that the operation ends by its deadline while Redis still
 * says nothing (without one it would wait for the whole stall, here for ever), not how punctual
 * this machine's timers are.
 */
const OVER_WITHIN_MS = 10 * DEADLINE_MS;

/**
 * Every ddd-kit operation on Redis is bounded by its `operationTimeoutMs`: on a Redis that accepts
 * the connection but answers nothing (SIGSTOP of a server of this test's own), it rejects with
 * OperationTimeoutError, and its unknown outcome is handled as a lost reply's is.
 */
describe('ddd-kit operations on a Redis that answers nothing', () => {
  let server: Awaited<ReturnType<typeof startRedisServer>>;
  // No commandTimeout: the operation deadline alone bounds these operations.
  let client: Redis;

  beforeAll(async () => {
    server = await startRedisServer();
    client = new Redis(server.url, { lazyConnect: true });
    await client.connect();
  });
  afterEach(() => {
    server.resume();
    jest.restoreAllMocks();
  });
  afterAll(async () => {
    server?.resume();
    await client?.quit();
    await server?.stop();
  });

  /** Settles `operation()` with Redis paused; resumes Redis afterwards. The error it rejected with, and when. */
  async function whileSilent(operation: () => Promise<unknown>): Promise<{ error: unknown; ms: number }> {
    // A round trip first, so that the connection is up and the command is sent on it.
    await client.ping();
    server.pause();
    const started = performance.now();
    try {
      // The ceiling only turns a hang (no deadline) into a failure that says what it waited for.
      const error = await waitFor(
        'the operation on the paused Redis to settle',
        operation().then(
          () => 'resolved',
          (caught: unknown) => caught,
        ),
        { timeoutMs: OVER_WITHIN_MS },
      );
      return { error, ms: performance.now() - started };
    } finally {
      server.resume();
    }
  }

  function expectDeadline({ error, ms }: { error: unknown; ms: number }, operation: string): void {
    expect(error).toBeInstanceOf(OperationTimeoutError);
    expect(error).toMatchObject({ code: 'OPERATION_TIMEOUT', timeoutMs: DEADLINE_MS });
    expect((error as Error).message).toContain(operation);
    expect(ms).toBeLessThan(OVER_WITHIN_MS);
  }

  it('PrepareKey on Redis: prepare, get, rollback and reprepare reject with OperationTimeoutError', async () => {
    const factory = new RedisPrepareKeyFactory(client, {
      keyPrefix: `${uniqueName('silent')}:`,
      operationTimeoutMs: DEADLINE_MS,
    });
    const names = factory.create<string>('username');
    await expect(names.prepare('held', 'owner')).resolves.toBe(true);

    expectDeadline(
      await whileSilent(() => names.prepare('fresh', 'caller')),
      "Redis prepare of prepare key 'username'",
    );
    expectDeadline(await whileSilent(() => names.get('held')), 'Redis get');
    expectDeadline(await whileSilent(() => names.rollback('held', 'owner')), 'Redis rollback');
    expectDeadline(await whileSilent(() => names.reprepare('held', 'owner', 'other')), 'Redis reprepare');
  });

  it('a prepare that hit its deadline leaves no reservation once Redis answers again; what else it did not know stays', async () => {
    const factory = new RedisPrepareKeyFactory(client, {
      keyPrefix: `${uniqueName('silent')}:`,
      operationTimeoutMs: DEADLINE_MS,
    });
    const names = factory.create<string>('username');
    await names.prepare('kept', 'owner');

    expectDeadline(await whileSilent(() => names.prepare('late', 'caller')), 'Redis prepare');
    // Redis ran the write once resumed, and the release queued behind it on the same connection.
    await expect(names.getValue('late')).resolves.toBeUndefined();
    await expect(names.prepare('late', 'someone else')).resolves.toBe(true);
    // A rollback that hit its deadline is not retried or guessed at: it ran once Redis answered.
    expectDeadline(await whileSilent(() => names.rollback('kept', 'owner')), 'Redis rollback');
    await expect(names.get('kept')).resolves.toBeUndefined();
  });

  it('RedisIdempotencyStore: a begin that hit its deadline runs no work', async () => {
    const store = new RedisIdempotencyStore(client, {
      keyPrefix: `${uniqueName('silent')}:`,
      operationTimeoutMs: DEADLINE_MS,
    });
    const work = jest.fn(async () => 'done');
    expectDeadline(
      await whileSilent(() => store.run({ key: 'k1', fingerprint: 'f' }, work)),
      'Redis idempotency begin',
    );
    expect(work).not.toHaveBeenCalled();
  });

  it('RedisMachineIdDistributor: distribute, heartbeat and release reject with OperationTimeoutError', async () => {
    const distributor = new RedisMachineIdDistributor(client, {
      keyPrefix: `${uniqueName('silent')}:`,
      operationTimeoutMs: DEADLINE_MS,
    });
    const request = { namespace: 'orders', machineBits: 4, instanceId: 'instance-a' };
    const held = await distributor.distribute(request);
    const state = { ...request, ...held, lastTimestamp: Date.now() };

    expectDeadline(await whileSilent(() => distributor.distribute(request)), 'Redis machine-ID distribute');
    expectDeadline(await whileSilent(() => distributor.guard(state)), 'Redis machine-ID heartbeat');
    expectDeadline(await whileSilent(() => distributor.revert(state)), 'Redis machine-ID release');
  });

  it('RedisSegmentSource: a block reserved on a silent Redis rejects with OperationTimeoutError', async () => {
    const source = new RedisSegmentSource(client, { operationTimeoutMs: DEADLINE_MS });
    expectDeadline(await whileSilent(() => source.reserve(uniqueName('segment'), 100)), 'Redis segment');
  });

  it('a client a module opens has commandTimeout; a client given without one is named in one warning', async () => {
    const owned = await openRedis({ url: server.url }, new Logger('test'), (cause) => cause);
    try {
      expect(owned.options.commandTimeout).toBe(5_000);
    } finally {
      await owned.quit();
    }

    const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    const given = new Redis(server.url, { lazyConnect: true });
    new RedisPrepareKeyFactory(given);
    new RedisMachineIdDistributor(given);
    new RedisIdempotencyStore(given);
    const warnings = warn.mock.calls.map((call) => String(call[0]));
    expect(warnings.filter((line) => line.includes('has no commandTimeout'))).toHaveLength(1);
    expect(warnings.find((line) => line.includes('has no commandTimeout'))).toContain('RedisPrepareKeyFactory');

    const bounded = new Redis(server.url, { lazyConnect: true, commandTimeout: 5_000 });
    new RedisPrepareKeyFactory(bounded);
    expect(warn.mock.calls.filter((call) => String(call[0]).includes('has no commandTimeout'))).toHaveLength(1);
    given.disconnect();
    bounded.disconnect();
  });
});
