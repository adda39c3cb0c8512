// The outbox health indicator on PostgreSQL (the outbox table behind the fault proxy): up with a
// drained outbox; down when the oldest pending event is older than maxLagMs (no relay running);
// dead letters reported, down only when failOnDeadLetters; down when the store is black-holed;
// up with { enabled: false } when the outbox is off. The same lag and black hole on the
// MongoDB-wire emulator (a MongoOutboxStore inside the documents).
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  Controller,
  Get,
  Inject,
  Module,
  ServiceUnavailableException,
  type INestApplicationContext,
} from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { HealthCheckService, TerminusModule, type HealthCheckResult } from '@nestjs/terminus';
import pg from 'pg';
import mongoose, { type Connection } from 'mongoose';
import { RepositoryModule } from '@ddd-kit/repository';
import { OutboxHealthIndicator, type OutboxHealthCheckOptions } from '@ddd-kit/repository/health';
import { MongoOutboxStore, OutboxRelay, PostgresOutboxStore } from '@ddd-kit/repository/outbox';
import { proxyUrl, type FaultProxy } from '../support/fault-proxy/index.js';
import { mongoLabel, mongoUri, postgresSchema, uniqueName } from '../support/servers.js';
import { waitFor } from '../support/wait.js';
import { Counter, CounterMongooseRepository, CounterPostgresRepository } from './support/counter.aggregate.js';

/** The probe's deadline while the store is black-holed: no answer ever comes, so it decides nothing but the wait. */
const TIMEOUT_MS = 300;
/** The deadline of a probe that expects an answer: far above what a loaded machine needs. */
const ANSWER_MS = 10_000;

@Controller('health')
class HealthController {
  constructor(
    @Inject(HealthCheckService) private readonly health: HealthCheckService,
    @Inject(OutboxHealthIndicator) readonly outbox: OutboxHealthIndicator,
  ) {}

  @Get()
  check(options: OutboxHealthCheckOptions = {}) {
    return this.health.check([() => this.outbox.isHealthy('outbox', { timeoutMs: ANSWER_MS, ...options })]);
  }
}

@Module({ imports: [TerminusModule], controllers: [HealthController], providers: [OutboxHealthIndicator] })
class HealthModule {}

describe('OutboxHealthIndicator on PostgreSQL', () => {
  let schema: Awaited<ReturnType<typeof postgresSchema>>;
  let proxy: FaultProxy;
  let pool: pg.Pool;
  let app: INestApplicationContext;
  let n = 0;

  /** An outbox table of its own with one counter written (one pending event), and a relay that is not running. */
  async function outboxWithOneEvent(relayOptions: Partial<ConstructorParameters<typeof OutboxRelay>[0]> = {}) {
    const i = ++n;
    const store = new PostgresOutboxStore({ pool, table: `outbox_${i}`, notifyChannel: false });
    await new CounterPostgresRepository({ aggregate: Counter, pool, table: `counters_${i}`, outbox: store }).insert(
      new Counter(`c${i}`, 'one'),
    );
    const relay = new OutboxRelay({ stores: [store], deliver: async () => {}, autoStart: false, ...relayOptions });
    return { store, relay };
  }

  const indicator = () => app.get(HealthController);

  beforeAll(async () => {
    schema = await postgresSchema('outbox_health');
    const proxied = await proxyUrl('postgres', schema.url);
    proxy = proxied.proxy;
    pool = new pg.Pool({ connectionString: proxied.url, max: 2 });
    app = await (await Test.createTestingModule({ imports: [HealthModule] }).compile()).init();
  });

  afterAll(async () => {
    proxy?.heal({ reset: true });
    await app?.close();
    await pool?.end();
    await proxy?.close();
    await schema?.drop();
  });

  it('is up with a drained outbox (terminus JSON through HealthCheckService)', async () => {
    const { relay } = await outboxWithOneEvent();
    expect(await relay.drain()).toBe(1);
    const up = { status: 'up', pending: 0, oldestPendingAgeMs: null, deadLetters: 0, oldestDeadLetterAgeMs: null };
    expect(await indicator().check({ relay })).toEqual({
      status: 'ok',
      info: { outbox: up },
      error: {},
      details: { outbox: up },
    });
  });

  it('is down when the oldest pending event is older than maxLagMs (no relay delivering), up while younger', async () => {
    const { store } = await outboxWithOneEvent();
    // The same parked event seen now (young) and from a clock 61 s ahead (past the default maxLagMs of 60 s).
    const now = new OutboxRelay({ stores: [store], deliver: async () => {}, autoStart: false });
    const later = new OutboxRelay({
      stores: [store],
      deliver: async () => {},
      autoStart: false,
      clock: () => Date.now() + 61_000,
    });
    expect((await indicator().outbox.isHealthy('outbox', { relay: now, timeoutMs: ANSWER_MS })).outbox).toMatchObject({
      status: 'up',
      pending: 1,
      deadLetters: 0,
    });
    // HealthCheckService answers 503: the terminus JSON is the exception's response.
    const failure = await indicator()
      .check({ relay: later })
      .then(
        () => null,
        (error: unknown) => error,
      );
    expect(failure).toBeInstanceOf(ServiceUnavailableException);
    const result = (failure as ServiceUnavailableException).getResponse() as HealthCheckResult;
    expect(result.status).toBe('error');
    expect(result.error?.outbox).toMatchObject({
      status: 'down',
      pending: 1,
      deadLetters: 0,
      message: expect.stringMatching(/^the oldest pending event is \d+ ms old \(maxLagMs 60000\)$/),
    });
    expect(result.error?.outbox?.oldestPendingAgeMs as number).toBeGreaterThan(60_000);
    // A larger maxLagMs tolerates it.
    expect(
      (await indicator().outbox.isHealthy('outbox', { relay: later, maxLagMs: 120_000, timeoutMs: ANSWER_MS })).outbox
        .status,
    ).toBe('up');
  });

  it('reports dead letters, and is down with one only when failOnDeadLetters', async () => {
    // The relay's clock: the dead letter dies at its `now`, and is 5 s old when the check reads it.
    let now = Date.now() + 1_000;
    const { relay } = await outboxWithOneEvent({
      maxAttempts: 1,
      clock: () => now,
      deliver: async () => Promise.reject(new Error('handler broken')),
    });
    await relay.drain();
    now += 5_000;
    expect(await relay.status()).toMatchObject({ pending: 0, deadLetters: 1 });
    expect((await indicator().outbox.isHealthy('outbox', { relay, timeoutMs: ANSWER_MS })).outbox).toEqual({
      status: 'up',
      pending: 0,
      oldestPendingAgeMs: null,
      deadLetters: 1,
      oldestDeadLetterAgeMs: 5_000,
    });
    expect(
      (await indicator().outbox.isHealthy('outbox', { relay, failOnDeadLetters: true, timeoutMs: ANSWER_MS })).outbox,
    ).toEqual({
      status: 'down',
      pending: 0,
      oldestPendingAgeMs: null,
      deadLetters: 1,
      oldestDeadLetterAgeMs: 5_000,
      message: '1 dead letter(s) wait for an operator',
    });
  });

  it('is down when the outbox store is black-holed, and up again once it answers', async () => {
    const { relay } = await outboxWithOneEvent();
    await relay.drain();
    proxy.blackhole();
    try {
      expect((await indicator().outbox.isHealthy('outbox', { relay, timeoutMs: TIMEOUT_MS })).outbox).toEqual({
        status: 'down',
        message: `outbox store: no answer within ${TIMEOUT_MS} ms`,
      });
    } finally {
      proxy.heal({ reset: true });
    }
    // The pool's black-holed connections were reset: status() may fail once more before a fresh one answers.
    const entry = await waitFor('the indicator to report up', async () => {
      const reported = (await indicator().outbox.isHealthy('outbox', { relay, timeoutMs: ANSWER_MS })).outbox;
      if (reported.status !== 'up') throw new Error(`reported ${JSON.stringify(reported)}`);
      return reported;
    });
    expect(entry).toEqual({
      status: 'up',
      pending: 0,
      oldestPendingAgeMs: null,
      deadLetters: 0,
      oldestDeadLetterAgeMs: null,
    });
  });

  it('rejects a maxLagMs that is not a positive number', async () => {
    const { relay } = await outboxWithOneEvent();
    await expect(indicator().outbox.isHealthy('outbox', { relay, maxLagMs: -1 })).rejects.toThrow(
      'maxLagMs must be a positive number',
    );
  });
});

describe(`OutboxHealthIndicator on ${mongoLabel()} (MongoOutboxStore)`, () => {
  let proxy: FaultProxy;
  let connection: Connection;
  let app: INestApplicationContext;

  beforeAll(async () => {
    const proxied = await proxyUrl('mongo', mongoUri());
    proxy = proxied.proxy;
    connection = await mongoose
      .createConnection(proxied.url, { dbName: uniqueName('outbox_health'), serverSelectionTimeoutMS: 2_000 })
      .asPromise();
    app = await (await Test.createTestingModule({ imports: [HealthModule] }).compile()).init();
  });

  afterAll(async () => {
    proxy?.heal({ reset: true });
    await app?.close();
    await connection?.close();
    await proxy?.close();
  });

  it('down for an event older than maxLagMs, up once drained, down while the store is black-holed', async () => {
    const store = new MongoOutboxStore({ collections: [connection.db!.collection('counters')] });
    await store.ensureIndexes();
    await new CounterMongooseRepository({
      connection,
      collection: 'counters',
      aggregate: Counter,
      outbox: store,
    }).insert(new Counter('m1', 'one'));
    const outbox = app.get(HealthController).outbox;
    const later = new OutboxRelay({
      stores: [store],
      deliver: async () => {},
      autoStart: false,
      clock: () => Date.now() + 61_000,
    });
    expect((await outbox.isHealthy('outbox', { relay: later, timeoutMs: ANSWER_MS })).outbox).toMatchObject({
      status: 'down',
      pending: 1,
      deadLetters: 0,
    });

    const relay = new OutboxRelay({ stores: [store], deliver: async () => {}, autoStart: false });
    expect(await relay.drain()).toBe(1);
    expect((await outbox.isHealthy('outbox', { relay, timeoutMs: ANSWER_MS })).outbox).toEqual({
      status: 'up',
      pending: 0,
      oldestPendingAgeMs: null,
      deadLetters: 0,
      oldestDeadLetterAgeMs: null,
    });

    proxy.blackhole();
    try {
      expect((await outbox.isHealthy('outbox', { relay, timeoutMs: TIMEOUT_MS })).outbox).toEqual({
        status: 'down',
        message: `outbox store: no answer within ${TIMEOUT_MS} ms`,
      });
    } finally {
      proxy.heal({ reset: true });
    }
  });
});

describe('OutboxHealthIndicator without an outbox', () => {
  it.each([
    ['no RepositoryModule (no relay to inject)', []],
    ['RepositoryModule with the outbox off', [RepositoryModule.forRoot({})]],
  ])('is up with { enabled: false }: %s', async (_, imports) => {
    const app = await (await Test.createTestingModule({ imports: [...imports, HealthModule] }).compile()).init();
    try {
      expect(await app.get(HealthController).check()).toMatchObject({
        status: 'ok',
        details: { outbox: { status: 'up', enabled: false } },
      });
    } finally {
      await app.close();
    }
  });

  it('reads the relay RepositoryModule opened when the outbox is on', async () => {
    const app = await (
      await Test.createTestingModule({
        imports: [RepositoryModule.forRoot({ outbox: { relay: false } }), HealthModule],
      }).compile()
    ).init();
    try {
      expect(await app.get(HealthController).check()).toMatchObject({
        status: 'ok',
        details: {
          outbox: { status: 'up', pending: 0, oldestPendingAgeMs: null, deadLetters: 0, oldestDeadLetterAgeMs: null },
        },
      });
    } finally {
      await app.close();
    }
  });
});
