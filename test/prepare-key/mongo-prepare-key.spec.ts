import { afterAll, afterEach, beforeAll, describe, expect, it, jest } from '@jest/globals';
import mongoose, { type Connection, type mongo } from 'mongoose';
import {
  PrepareKeyArgumentError,
  PreparedValue,
  TTL_FOREVER,
  toTtlAt,
  MongoPrepareKeyFactory,
  type PrepareKey,
} from '@ddd-kit/prepare-key';
import { describePrepareKeyContract, PREPARE_KEY_FAULTS } from '@ddd-kit/prepare-key/testing';
import { mongoFaultTarget } from '../support/fault-proxy/prepare-key-fault-targets.js';
import { dropMongoDatabase, mongoUri, uniqueName } from '../support/servers.js';
import { primitivesOf } from '../../libs/prepare-key/src/prepare-key.primitives.js';
import { EXPIRE_AT_INDEX } from '../../libs/prepare-key/src/backends/mongo/mongo-prepare-key.constants.js';
import type { MongoPrepareKeyDocument } from '../../libs/prepare-key/src/backends/mongo/mongo-prepare-key.interfaces.js';
import type { MongoRecordCollection } from '../../libs/prepare-key/src/backends/mongo/mongo-record-collection.js';

describePrepareKeyContract(
  'MongoDB wire protocol (jongodb emulator unless MONGODB_URI is set)',
  async () => {
    const dbName = uniqueName('pk_contract');
    const connection = await mongoose.createConnection(mongoUri(), { dbName }).asPromise();
    const injector = await mongoFaultTarget(mongoUri(), dbName);
    return {
      factory: new MongoPrepareKeyFactory(connection),
      faults: injector.faults,
      close: async () => {
        await injector.close();
        await dropMongoDatabase(connection.db!);
        await connection.close();
      },
    };
  },
  { faults: PREPARE_KEY_FAULTS, concurrentFaults: true },
);

describe('MongoPrepareKeyFactory', () => {
  let connection: Connection;
  /** Commands the driver sent, by name, while `recording` is on. */
  const sent: string[] = [];

  beforeAll(async () => {
    connection = await mongoose
      .createConnection(mongoUri(), { dbName: uniqueName('pk_mongo'), monitorCommands: true })
      .asPromise();
    connection.getClient().on('commandStarted', (event: mongo.CommandStartedEvent) => sent.push(event.commandName));
  });

  afterAll(async () => {
    await connection.close();
  });

  afterEach(() => {
    jest.restoreAllMocks();
  });

  function raw(collectionName: string): mongo.Collection<MongoPrepareKeyDocument> {
    return connection.db!.collection<MongoPrepareKeyDocument>(collectionName);
  }

  function storeOf(pk: PrepareKey<unknown>): MongoRecordCollection {
    return (pk as unknown as { store: MongoRecordCollection }).store;
  }

  describe('documents', () => {
    it('stores { _id: key, value: canonical JSON string, ttlAt, op, expireAt: ttlAt + retention } in prepare_<name>', async () => {
      const pk = new MongoPrepareKeyFactory(connection, { retentionMs: 3_600_000 }).create(uniqueName('users'));
      const ttlAt = Date.now() + 60_000;
      await pk.prepare('alice', toTtlAt({ b: { d: 1, c: 2 }, a: 1 }, ttlAt));
      expect(await raw(`prepare_${pk.name}`).findOne({ _id: 'alice' })).toEqual({
        _id: 'alice',
        value: '{"a":1,"b":{"c":2,"d":1}}',
        ttlAt,
        op: expect.stringMatching(/^[A-Za-z0-9_-]+$/),
        expireAt: new Date(ttlAt + 3_600_000),
      });
    });

    it('gives a forever record no expireAt, and moves expireAt with every reprepare', async () => {
      const pk = new MongoPrepareKeyFactory(connection).create(uniqueName('users'));
      const records = raw(`prepare_${pk.name}`);
      const op = expect.any(String);
      await pk.prepare('k', 'v');
      expect(await records.findOne({ _id: 'k' })).toEqual({ _id: 'k', value: '"v"', ttlAt: TTL_FOREVER, op });
      const ttlAt = Date.now() + 60_000;
      await pk.reprepare('k', toTtlAt('v', ttlAt));
      expect((await records.findOne({ _id: 'k' }))?.expireAt).toEqual(new Date(ttlAt + 24 * 3_600_000));
      await pk.reprepare('k', 'v', 'w');
      expect(await records.findOne({ _id: 'k' })).toEqual({ _id: 'k', value: '"w"', ttlAt: TTL_FOREVER, op });
    });

    it('treats a drop time past the largest date as never (an invalid date would be stored as 1970 and dropped at once)', async () => {
      const pk = new MongoPrepareKeyFactory(connection, { retentionMs: 8_640_000_000_000_000 }).create(uniqueName('n'));
      const ttlAt = Date.now() + 60_000;
      await pk.prepare('k', toTtlAt('v', ttlAt));
      const stored = await raw(`prepare_${pk.name}`).findOne({ _id: 'k' });
      expect(stored?.expireAt).toBeUndefined();
      expect(await pk.get('k')).toBe('v');
    });

    it('leaves a tombstone { _id, op, expireAt } on rollback, which every read and listing treats as no record', async () => {
      const pk = new MongoPrepareKeyFactory(connection).create(uniqueName('n'));
      await pk.prepare('k', 'v');
      const before = Date.now();
      expect(await pk.rollback('k', 'v')).toBe(true);
      const stored = await raw(`prepare_${pk.name}`).findOne({ _id: 'k' });
      expect(stored).toEqual({ _id: 'k', op: expect.any(String), expireAt: expect.any(Date) });
      expect(stored!.expireAt!.getTime()).toBeGreaterThanOrEqual(before + 110_000);
      expect(await pk.getValue('k')).toBeUndefined();
      expect(await pk.rollback('k')).toBe(false);
      expect(await pk.reprepare('k', 'v')).toBe(false);
      expect(await pk.reprepare('k', 'v', 'w')).toBe(false);
      const listed: string[] = [];
      for await (const record of pk.records()) listed.push(record.key);
      expect(listed).toEqual([]);
      expect(await pk.prepare('k', 'again')).toBe(true);
      expect(await pk.get('k')).toBe('again');
    });

    it('with retentionMs Infinity, never sets expireAt', async () => {
      const pk = new MongoPrepareKeyFactory(connection, { retentionMs: Number.POSITIVE_INFINITY }).create(
        uniqueName('n'),
      );
      await pk.prepare('k', toTtlAt('v', Date.now() - 1_000));
      expect((await raw(`prepare_${pk.name}`).findOne({ _id: 'k' }))?.expireAt).toBeUndefined();
    });

    it('compares values by their canonical string, whatever the key order of embedded documents', async () => {
      const pk = new MongoPrepareKeyFactory(connection).create<Record<string, unknown>>(uniqueName('n'));
      await pk.prepare('k', { x: { b: 1, a: 2 } });
      expect(await pk.reprepare('k', { x: { a: 2, b: 1 } }, { y: 1 })).toBe(true);
      expect(await pk.rollback('k', { y: 1 })).toBe(true);
    });
  });

  describe('collections and indexes', () => {
    it('names collections prepare_<name> with the name percent-encoded where needed, and honours collectionPrefix', async () => {
      const factory = new MongoPrepareKeyFactory(connection);
      const encoded = [
        ['username', 'prepare_username'],
        ['user-name_2', 'prepare_user-name_2'],
        ['a.b', 'prepare_a%2Eb'],
        ['a%2Eb', 'prepare_a%252Eb'],
        ['$where', 'prepare_%24where'],
        ['système', 'prepare_syst%C3%A8me'],
      ];
      for (const [name, collectionName] of encoded)
        expect(storeOf(factory.create(name)).collectionName).toBe(collectionName);
      expect(
        storeOf(new MongoPrepareKeyFactory(connection, { collectionPrefix: 'pk.' }).create('sku')).collectionName,
      ).toBe('pk.sku');

      const pk = factory.create('a.b');
      await pk.prepare('k', 1);
      expect(await raw('prepare_a%2Eb').countDocuments()).toBe(1);
      expect(await factory.create('a%2Eb').get('k')).toBeUndefined();
    });

    it('creates the TTL index on expireAt once per collection, not per call', async () => {
      const factory = new MongoPrepareKeyFactory(connection);
      const name = uniqueName('idx');
      const [a, b] = [factory.create(name), factory.create(name)];
      sent.length = 0;
      await Promise.all(Array.from({ length: 40 }, (_, i) => (i % 2 ? a : b).prepare(`k${i}`, i)));
      await Promise.all([a.get('k1'), b.rollback('k2'), a.reprepare('k3', 4), b.getValue('k4')]);
      expect(sent.filter((command) => command === 'createIndexes')).toHaveLength(1);

      const indexes = await raw(`prepare_${name}`).indexes();
      expect(indexes).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ name: EXPIRE_AT_INDEX, key: { expireAt: 1 }, expireAfterSeconds: 0 }),
        ]),
      );
    });
  });

  describe('prepare racing an insert', () => {
    /**
     * Makes another writer insert `winner` as key 'k' just before `pk`'s next upsert reaches the
     * server; `answer` then plays that upsert (the driver's own call, or what the server would say).
     */
    async function raceNextUpsert(
      pk: PrepareKey<unknown>,
      winner: MongoPrepareKeyDocument,
      answer: (
        upsert: () => Promise<mongo.UpdateResult<MongoPrepareKeyDocument>>,
      ) => Promise<mongo.UpdateResult<MongoPrepareKeyDocument>>,
    ): Promise<void> {
      await pk.prepare('warm-up', 0); // opens the collection
      const collection = storeOf(pk).collection!;
      const updateOne = collection.updateOne.bind(collection);
      jest
        .spyOn(collection, 'updateOne')
        .mockImplementationOnce(async (...args: Parameters<typeof collection.updateOne>) => {
          await raw(collection.collectionName).insertOne(winner);
          return answer(() => updateOne(...args));
        });
    }

    it('takes the key when the writer that won the _id had written an already-expired record', async () => {
      const pk = new MongoPrepareKeyFactory(connection).create(uniqueName('race'));
      // The upsert's query found no record; by its insert, the expired one was there: the
      // server answers with a duplicate-key error.
      await raceNextUpsert(pk, { _id: 'k', value: '"former"', ttlAt: Date.now() - 1_000 }, async () => {
        throw Object.assign(new Error('E11000 duplicate key error collection: prepare_race index: _id_'), {
          code: 11000,
        });
      });
      expect(await pk.prepare('k', 'mine')).toBe(true);
      expect(await pk.get('k')).toBe('mine');
    });

    it('answers false, not an error, when the writer that won the _id holds it', async () => {
      const pk = new MongoPrepareKeyFactory(connection).create(uniqueName('race'));
      await raceNextUpsert(pk, { _id: 'k', value: '"winner"', ttlAt: TTL_FOREVER }, (upsert) => upsert());
      expect(await pk.prepare('k', 'mine')).toBe(false);
      expect(await pk.get('k')).toBe('winner');
    });
  });

  describe('bad input', () => {
    it('refuses operator objects, oversize keys and unencodable values: no command is sent, the collection is unchanged', async () => {
      const pk = new MongoPrepareKeyFactory(connection).create<unknown>(uniqueName('bad'));
      const sentinelTtl = Date.now() + 3_600_000;
      await pk.prepare('sentinel', toTtlAt({ owner: 'sentinel' }, sentinelTtl));
      const records = raw(`prepare_${pk.name}`);
      const before = await records.find().toArray();

      const operators = [{ $ne: null }, { $gt: '' }, { $regex: '.*' }] as unknown as string[];
      const cyclic: Record<string, unknown> = {};
      cyclic.self = cyclic;
      sent.length = 0;
      for (const operator of operators) {
        for (const attempt of [
          () => pk.prepare(operator, 'v'),
          () => pk.get(operator),
          () => pk.getValue(operator),
          () => pk.rollback(operator),
          () => pk.rollback(operator, { owner: 'sentinel' }),
          () => pk.reprepare(operator, 'v'),
          () => pk.reprepare('sentinel', { owner: 'sentinel' }, operator, 'v'),
        ]) {
          await expect(attempt()).rejects.toBeInstanceOf(PrepareKeyArgumentError);
        }
        // Below the validation too: a primitive never sends a non-string as a filter.
        await expect(primitivesOf(pk).doRollback(operator, 'op')).rejects.toThrow(TypeError);
        await expect(primitivesOf(pk).doGetValue(operator)).rejects.toThrow(TypeError);
        await expect(primitivesOf(pk).doPrepare(operator, '"v"', TTL_FOREVER, 'op')).rejects.toThrow(TypeError);
      }
      for (const attempt of [
        () => pk.prepare('k'.repeat(1025), 'v'),
        () => pk.prepare('fresh', 10n),
        () => pk.prepare('fresh', cyclic),
        () => pk.reprepare('sentinel', () => 1),
        () => pk.rollback('sentinel', Symbol('s')),
        () => pk.prepare('fresh', toTtlAt('v', Number.NaN)),
      ]) {
        await expect(attempt()).rejects.toBeInstanceOf(PrepareKeyArgumentError);
      }
      expect(sent).toEqual([]);
      expect(await records.find().toArray()).toEqual(before);
      expect(await pk.getValue('sentinel')).toEqual(new PreparedValue({ owner: 'sentinel' }, sentinelTtl));
    });

    it('refuses bad options and unusable names with a named error that says what to do', () => {
      expect(() => new MongoPrepareKeyFactory(connection, { collectionPrefix: 'a$' })).toThrow(PrepareKeyArgumentError);
      expect(() => new MongoPrepareKeyFactory(connection, { collectionPrefix: 'system.x' })).toThrow(/system\./);
      expect(() => new MongoPrepareKeyFactory(connection, { retentionMs: -5 })).toThrow(/retentionMs/);
      expect(() => new MongoPrepareKeyFactory({} as Connection)).toThrow(/mongoose Connection/);
      expect(() => new MongoPrepareKeyFactory(connection).create('é'.repeat(100))).toThrow(/shorter name/);
    });
  });
});
