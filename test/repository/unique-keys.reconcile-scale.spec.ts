// reconcileUniqueKeys at 100,000 members, with reservations on Redis (a server of the file's own,
// so that no other suite's writes resize its table mid-SCAN) and on PostgreSQL (a fresh schema),
// against a PostgreSQL repository. Each store and the repository are seen through doubles that
// count what the reconciler asks: it must look up owners and reservations a page at a time, never
// one per record, and never ask for more than a page at once (its memory stays that of a page).
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  PostgresPrepareKeyFactory,
  RedisPrepareKeyFactory,
  TTL_FOREVER,
  type PrepareKey,
  type PrepareKeyFactory,
} from '@ddd-kit/prepare-key';
import type { SweepProgress } from '@ddd-kit/core';
import { reconcileUniqueKeys, type UniqueKeyOwner } from '@ddd-kit/repository';
import { Redis } from 'ioredis';
import pg from 'pg';
import { startRedisServer } from '../support/server-provider.js';
import { postgresSchema, uniqueName } from '../support/servers.js';
import { Member, MemberPostgresRepository } from './support/member.aggregate.js';

const N = 100_000;
const PAGE = 400;
const OLD = Date.now() - 60 * 60_000;
const id = (i: number) => `m${String(i).padStart(6, '0')}`;
const handle = (i: number) => `h${String(i).padStart(6, '0')}`;
/** Canonical JSON (keys in order), as PrepareKey stores a value. */
const ownerJson = (aggregate: string, owner: string, at: number) =>
  `{"aggregate":${JSON.stringify(aggregate)},"at":${at},"id":${JSON.stringify(owner)}}`;

/** Members whose reservation was lost: restored. */
const missing = (i: number) => i % 1000 === 1;
/** Members that took the handle of the member before them: reported twice, changed by nobody. */
const sharer = (i: number) => i % 25_000 === 7;

/** The damage, as [key, owner JSON] reservations beside the members' own. */
function reservations(): Array<[string, string]> {
  const rows: Array<[string, string]> = [];
  for (let i = 0; i < N; i++) if (!missing(i) && !sharer(i)) rows.push([handle(i), ownerJson('member', id(i), OLD)]);
  for (let j = 0; j < 50; j++) rows.push([`ghost${j}`, ownerJson('member', `nobody${j}`, OLD)]); // released
  // An earlier handle of a member, taken before its current one: released.
  for (let j = 0; j < 20; j++)
    rows.push([`old-${handle(j * 1000 + 500)}`, ownerJson('member', id(j * 1000 + 500), OLD - 1)]);
  for (let j = 0; j < 10; j++) rows.push([`young${j}`, ownerJson('member', `later${j}`, Date.now())]); // spared
  for (let j = 0; j < 5; j++) rows.push([`team${j}`, ownerJson('team', `t${j}`, OLD)]); // another type's
  return rows;
}

const sharers = Array.from({ length: N }, (_, i) => i).filter(sharer);
const EXPECTED = {
  scanned: N - N / 1000 - sharers.length + 50 + 20 + 10,
  live: N - N / 1000 - sharers.length,
  spared: 10,
  released: 70,
  restored: N / 1000,
  heldByOther: sharers.map((i) => ({
    name: 'handle',
    key: handle(i - 1),
    id: id(i),
    holder: { aggregate: 'member', id: id(i - 1) },
  })),
  shared: sharers.map((i) => ({ name: 'handle', key: handle(i - 1), ids: [id(i - 1), id(i)] })),
  failed: 0,
};

/** A PrepareKey that counts what it is asked: the largest batch, and lookups of one key. */
function counting(store: PrepareKey<UniqueKeyOwner>) {
  const asked = { largestBatch: 0, batches: 0, single: 0 };
  const double = Object.assign(Object.create(store) as PrepareKey<UniqueKeyOwner>, {
    getValues: (keys: readonly string[]) => {
      asked.largestBatch = Math.max(asked.largestBatch, keys.length);
      asked.batches++;
      return store.getValues(keys);
    },
    getValue: (key: string) => {
      asked.single++;
      return store.getValue(key);
    },
  });
  return { double, asked };
}

const backends: Array<
  [
    string,
    () => Promise<{
      factory: PrepareKeyFactory;
      seed: (rows: Array<[string, string]>) => Promise<void>;
      close: () => Promise<void>;
    }>,
  ]
> = [
  [
    'Redis',
    async () => {
      const server = await startRedisServer();
      const redis = new Redis(server.url);
      const keyPrefix = `${uniqueName('scale')}:`;
      return {
        factory: new RedisPrepareKeyFactory(redis, { keyPrefix, seal: false }),
        seed: async (rows) => {
          for (let at = 0; at < rows.length; at += 10_000) {
            const pipeline = redis.pipeline();
            for (const [key, value] of rows.slice(at, at + 10_000))
              pipeline.set(`${keyPrefix}{handle:${key}}`, `${TTL_FOREVER}|seed|${value}`);
            await pipeline.exec();
          }
        },
        close: async () => {
          redis.disconnect();
          await server.stop();
        },
      };
    },
  ],
  [
    'PostgreSQL',
    async () => {
      const schema = await postgresSchema('scale_keys');
      const pool = new pg.Pool({ connectionString: schema.url });
      const factory = new PostgresPrepareKeyFactory(pool, { table: 'keys', sweepIntervalMs: 0 });
      return {
        factory,
        seed: async (rows) => {
          await factory.create('handle').get('any'); // creates the table
          for (let at = 0; at < rows.length; at += 10_000) {
            const chunk = rows.slice(at, at + 10_000);
            await pool.query(
              `INSERT INTO keys (name, key, value, ttl_at, op) SELECT 'handle', k, v, $3, 'seed' FROM unnest($1::text[], $2::text[]) AS t(k, v)`,
              [chunk.map(([k]) => k), chunk.map(([, v]) => v), TTL_FOREVER],
            );
          }
        },
        close: async () => {
          await pool.end();
          await schema.drop();
        },
      };
    },
  ],
];

describe.each(backends)(`reconcileUniqueKeys of ${N} members on %s reservations`, (label, open) => {
  let opened: Awaited<ReturnType<typeof open>>;
  let members: pg.Pool;
  let dropMembers: () => Promise<void>;

  beforeAll(async () => {
    opened = await open();
    const schema = await postgresSchema('scale_members');
    members = new pg.Pool({ connectionString: schema.url });
    dropMembers = schema.drop;
  }, 60_000);

  afterAll(async () => {
    await members?.end();
    await dropMembers?.();
    await opened?.close();
  });

  it(`${label}: the exact report, a page at a time, with progress`, async () => {
    const handles = counting(opened.factory.create<UniqueKeyOwner>('handle'));
    const emails = counting(opened.factory.create<UniqueKeyOwner>('email'));
    const repository = new MemberPostgresRepository({
      pool: members,
      aggregate: Member,
      uniqueKeys: { handle: handles.double, email: emails.double },
    } as never);
    await repository.ensureTable();
    for (let at = 0; at < N; at += 10_000) {
      const slice = Array.from({ length: 10_000 }, (_, k) => at + k);
      await members.query(
        `INSERT INTO members (id, version, handle) SELECT * FROM unnest($1::text[], $2::int[], $3::text[])`,
        [slice.map(id), slice.map(() => 1), slice.map((i) => handle(sharer(i) ? i - 1 : i))],
      );
    }
    await opened.seed(reservations());

    const loads = { largestBatch: 0, batches: 0, single: 0 };
    const counted = {
      uniqueKeyReserver: () => repository.uniqueKeyReserver(),
      aggregates: (options: { pageSize?: number }) => repository.aggregates(options),
      findById: (memberId: string) => {
        loads.single++;
        return repository.findById(memberId);
      },
      findByIds: (ids: readonly string[]) => {
        loads.largestBatch = Math.max(loads.largestBatch, ids.length);
        loads.batches++;
        return repository.findByIds(ids);
      },
    };
    const progress: SweepProgress[] = [];
    const report = await reconcileUniqueKeys(counted, {
      pageSize: PAGE,
      onProgress: (p) => progress.push(p),
      progressIntervalMs: 0,
    });

    expect(report).toEqual(EXPECTED);
    // Owners and reservations looked up a page at a time: never one by one, never more than a page.
    expect(loads).toMatchObject({ single: 0 });
    expect(loads.largestBatch).toBeLessThanOrEqual(PAGE);
    expect(loads.batches).toBeLessThanOrEqual(2 * Math.ceil(N / PAGE) + 2);
    expect(handles.asked.single + emails.asked.single).toBe(0);
    expect(handles.asked.largestBatch).toBeLessThanOrEqual(PAGE);
    expect(handles.asked.batches).toBeLessThanOrEqual(2 * Math.ceil(N / PAGE));
    // Progress: reservations listed, then members, rising to the end.
    const done = progress.map((p) => p.done);
    expect(done).toEqual([...done].sort((a, b) => a - b));
    expect(done.at(-1)).toBe(EXPECTED.scanned + 5 + N);
    expect(progress.at(-1)!.perSecond).toBeGreaterThan(0);

    // The store as reconciled: restored, released, the rest untouched.
    const store = opened.factory.create<UniqueKeyOwner>('handle');
    expect(await store.get(handle(1001))).toMatchObject({ aggregate: 'member', id: id(1001) });
    expect(await store.get('ghost3')).toBeUndefined();
    expect(await store.get(`old-${handle(500)}`)).toBeUndefined();
    expect(await store.get('young3')).toMatchObject({ id: 'later3' });
    expect(await store.get('team3')).toMatchObject({ aggregate: 'team' });
    expect(await store.get(handle(6))).toMatchObject({ id: id(6) });
  }, 180_000);
});
