import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { DataSyncEvent } from '@ddd-kit/repository';
import mongoose, { type Connection } from 'mongoose';
import pg from 'pg';
import { mongoLabel, mongoUri, postgresSchema, uniqueName } from '../../../test/support/servers.js';
import { MongoUserReadModel } from '../src/read-model/mongo-user-read-model.js';
import { PostgresUserReadModel } from '../src/read-model/postgres-user-read-model.js';
import type { UserReadModel } from '../src/read-model/user-read-model.js';
import type { UserSnapshot } from '../src/users/user.aggregate.js';

// The relay delivers every event at least once: a repeat, a late redelivery (a lease that ran
// out while a handler was slow) or a replayed dead letter may arrive after newer events of the
// same user. The shared read models must then change nothing.

interface Subject {
  label: string;
  open: () => Promise<{ readModel: UserReadModel; close: () => Promise<void> }>;
}

const subjects: Subject[] = [
  {
    label: 'PostgreSQL',
    open: async () => {
      const schema = await postgresSchema('read_model');
      const pool = new pg.Pool({ connectionString: schema.url });
      const readModel = new PostgresUserReadModel(pool);
      await readModel.ensureTable();
      return {
        readModel,
        close: async () => {
          await pool.end();
          await schema.drop();
        },
      };
    },
  },
  {
    label: mongoLabel(),
    open: async () => {
      const connection: Connection = await mongoose
        .createConnection(`${mongoUri().replace(/\/+$/, '')}/${uniqueName('read_model')}`)
        .asPromise();
      const readModel = new MongoUserReadModel(connection);
      await readModel.ensureIndexes();
      return { readModel, close: () => connection.close() };
    },
  },
];

const upsert = (id: string, version: number, username: string) =>
  DataSyncEvent.upsert<string, UserSnapshot>('user', id, version, { id, username });
const purge = (id: string, version: number) =>
  DataSyncEvent.purge('user', id, version) as DataSyncEvent<string, UserSnapshot>;
const fresh = (prefix: string) => `${prefix}${randomUUID().replace(/-/g, '').slice(0, 12)}`;

describe.each(subjects)('the user read model on $label, fed at least once', (subject) => {
  let readModel: UserReadModel;
  let close: () => Promise<void>;

  beforeAll(async () => {
    ({ readModel, close } = await subject.open());
  });

  afterAll(async () => {
    await close?.();
  });

  const versionsOf = async (id: string) => {
    const found: number[] = [];
    for (let cursor: string | null = null, first = true; first || cursor !== null; first = false) {
      const page = await readModel.listVersions({ cursor, limit: 100 });
      found.push(...page.entries.filter((e) => e.id === id).map((e) => e.version));
      cursor = page.cursor;
    }
    return found;
  };

  it('a repeated event changes nothing', async () => {
    const id = fresh('r');
    const name = fresh('n');
    await readModel.apply([upsert(id, 1, name)]);
    await readModel.apply([upsert(id, 1, name)]);
    expect(await readModel.findByUsername(name)).toEqual([{ id, username: name, version: 1 }]);
  });

  it('an older UPSERT after a newer one changes nothing', async () => {
    const id = fresh('o');
    const [oldName, newName] = [fresh('old'), fresh('new')];
    await readModel.apply([upsert(id, 1, oldName)]);
    await readModel.apply([upsert(id, 2, newName)]);
    await readModel.apply([upsert(id, 1, oldName)]);
    expect(await readModel.findByUsername(oldName)).toEqual([]);
    expect(await readModel.findByUsername(newName)).toEqual([{ id, username: newName, version: 2 }]);
  });

  it('an UPSERT delivered again after the PURGE of a later write does not bring the user back', async () => {
    const id = fresh('p');
    const name = fresh('gone');
    await readModel.apply([upsert(id, 1, name)]);
    await readModel.apply([purge(id, 2)]);
    expect(await readModel.findByUsername(name)).toEqual([]);
    await readModel.apply([upsert(id, 1, name)]);
    expect(await readModel.findByUsername(name)).toEqual([]);
    expect(await versionsOf(id)).toEqual([]);
  });

  it('a PURGE repeated after the fact, or first of all, leaves no user', async () => {
    const id = fresh('q');
    const name = fresh('q');
    await readModel.apply([purge(id, 3)]);
    await readModel.apply([upsert(id, 2, name)]);
    await readModel.apply([purge(id, 3)]);
    expect(await readModel.findByUsername(name)).toEqual([]);
    expect(await versionsOf(id)).toEqual([]);
  });

  it("after reconciliation purged a user, an event it had already applied does not bring it back; reconciliation's upsert still repairs", async () => {
    const id = fresh('c');
    const name = fresh('c');
    await readModel.apply([upsert(id, 4, name)]);
    await readModel.purge(id);
    await readModel.apply([upsert(id, 4, name)]);
    expect(await readModel.findByUsername(name)).toEqual([]);
    await readModel.upsert(id, 5, { id, username: name });
    expect(await readModel.findByUsername(name)).toEqual([{ id, username: name, version: 5 }]);
    expect(await versionsOf(id)).toEqual([5]);
  });
});
