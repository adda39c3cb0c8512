// The repository health indicator on the stores RepositoryModule opened (MongoDB wire protocol
// and PostgreSQL, each behind the fault proxy): up while both answer, down naming the store that
// is black-holed or whose connections are reset, up again once it answers.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Controller, Get, Inject, Module, type INestApplicationContext } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { HealthCheckService, TerminusModule } from '@nestjs/terminus';
import { RepositoryModule } from '@ddd-kit/repository';
import { RepositoryHealthIndicator } from '@ddd-kit/repository/health';
import { proxyUrl, type FaultProxy } from '../support/fault-proxy/index.js';
import { mongoLabel, mongoUri, postgresSchema, uniqueName } from '../support/servers.js';
import { waitFor } from '../support/wait.js';

/** The probe's deadline while a store is black-holed: no answer ever comes, so it decides nothing but the wait. */
const TIMEOUT_MS = 300;
/** The deadline of a probe that expects answers: far above what a loaded machine needs. */
const ANSWER_MS = 10_000;

@Controller('health')
class HealthController {
  constructor(
    @Inject(HealthCheckService) private readonly health: HealthCheckService,
    @Inject(RepositoryHealthIndicator) readonly repository: RepositoryHealthIndicator,
  ) {}

  @Get()
  check() {
    return this.health.check([() => this.repository.isHealthy('repository', { timeoutMs: ANSWER_MS })]);
  }
}

@Module({ imports: [TerminusModule], controllers: [HealthController], providers: [RepositoryHealthIndicator] })
class HealthModule {}

type Entry = Record<string, unknown> & { status: string };

// Probes until the indicator reports `status` (and, when given, a message that matches). Down is
// probed with the short deadline (the black-holed store never answers); on a loaded machine the
// healthy store can miss it too, which must not decide a test: a report naming it is probed again.
async function reported(app: INestApplicationContext, status: 'up' | 'down', message?: RegExp): Promise<Entry> {
  const indicator = app.get(HealthController).repository;
  const timeoutMs = status === 'up' ? ANSWER_MS : TIMEOUT_MS;
  return waitFor(`the indicator to report ${status}${message ? ` (${message})` : ''}`, async () => {
    const entry = (await indicator.isHealthy('repository', { timeoutMs })).repository as Entry;
    if (entry.status === status && (!message || message.test(String(entry.message)))) return entry;
    throw new Error(`reported ${JSON.stringify(entry)}`);
  });
}

describe(`RepositoryHealthIndicator on ${mongoLabel()} and PostgreSQL`, () => {
  let schema: Awaited<ReturnType<typeof postgresSchema>>;
  let mongoProxy: FaultProxy;
  let postgresProxy: FaultProxy;
  let app: INestApplicationContext;

  beforeAll(async () => {
    schema = await postgresSchema('repository_health');
    const mongo = await proxyUrl('mongo', mongoUri());
    const postgres = await proxyUrl('postgres', schema.url);
    mongoProxy = mongo.proxy;
    postgresProxy = postgres.proxy;
    const moduleRef = await Test.createTestingModule({
      imports: [
        RepositoryModule.forRoot({
          uri: mongo.url,
          // The driver finds a reset server answering again at its next heartbeat (10 s by default).
          connectionOptions: {
            dbName: uniqueName('repository_health'),
            serverSelectionTimeoutMS: 2_000,
            heartbeatFrequencyMS: 500,
          },
          postgres: { url: postgres.url, poolOptions: { max: 2 } },
        }),
        HealthModule,
      ],
    }).compile();
    app = await moduleRef.init();
  });

  afterAll(async () => {
    for (const proxy of [mongoProxy, postgresProxy]) proxy?.heal({ reset: true });
    await app?.close();
    await Promise.all([mongoProxy?.close(), postgresProxy?.close()]);
    await schema?.drop();
  });

  it('is up, listing both stores, while both answer (terminus JSON through HealthCheckService)', async () => {
    expect(await app.get(HealthController).check()).toEqual({
      status: 'ok',
      info: { repository: { status: 'up', stores: ['mongodb', 'postgresql'], responseTime: expect.any(Number) } },
      error: {},
      details: { repository: { status: 'up', stores: ['mongodb', 'postgresql'], responseTime: expect.any(Number) } },
    });
  });

  it.each([
    ['postgresql', () => postgresProxy],
    ['mongodb', () => mongoProxy],
  ])('is down naming %s while it is black-holed, and up again once it answers', async (store, proxy) => {
    await reported(app, 'up');
    proxy().blackhole();
    try {
      expect(await reported(app, 'down', new RegExp(`^${store}: [^;]*$`))).toEqual({
        status: 'down',
        message: `${store}: no answer within ${TIMEOUT_MS} ms`,
        responseTime: expect.any(Number),
      });
    } finally {
      proxy().heal({ reset: true });
    }
    expect(await reported(app, 'up')).toMatchObject({ stores: ['mongodb', 'postgresql'] });
  });

  it('is down naming PostgreSQL when its connections are reset and new ones refused', async () => {
    await reported(app, 'up');
    postgresProxy.blackhole();
    postgresProxy.resetAll();
    try {
      // Only PostgreSQL named: a message naming the healthy store too would never match.
      expect((await reported(app, 'down', /^postgresql: [^;]*$/)).message).toMatch(/^postgresql: \S/);
    } finally {
      postgresProxy.heal({ reset: true });
    }
    await reported(app, 'up');
  });
});

describe('RepositoryHealthIndicator without a store', () => {
  it('is up with the in-memory repositories: nothing to reach', async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [RepositoryModule.forRoot({}), HealthModule],
    }).compile();
    const app = await moduleRef.init();
    try {
      expect(await app.get(HealthController).check()).toMatchObject({
        status: 'ok',
        details: { repository: { status: 'up', stores: ['memory'] } },
      });
    } finally {
      await app.close();
    }
  });
});
