import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import mongoose, { type Connection } from 'mongoose';
import { mongoLabel, mongoUri, uniqueName } from '../support/servers.js';
import { Counter, CounterMongooseRepository } from './support/counter.aggregate.js';
import { describeReconciliationContract } from './support/reconciliation-contract.js';
import {
  describeRepositoryContract,
  type CounterRepository,
  type CounterRepositoryClass,
  type RepositoryContractTarget,
} from '@ddd-kit/repository/testing';

// Every suite on its own database, every repository on its own collection, emptied at the end
// (the test server, an emulator, has no drop commands).
const onMongo = async (): Promise<RepositoryContractTarget> => {
  const connection: Connection = await mongoose
    .createConnection(mongoUri(), { dbName: uniqueName('repository_contract') })
    .asPromise();
  const used: string[] = [];
  return {
    Repository: CounterMongooseRepository as unknown as CounterRepositoryClass,
    options: () => {
      used.push(`counters_${used.length + 1}`);
      return { connection, collection: used[used.length - 1] };
    },
    raw: async (repository: CounterRepository) => {
      const name = (repository as unknown as { collectionName: string }).collectionName;
      return connection.db!.collection(name).find({}).sort({ _id: 1 }).toArray();
    },
    close: async () => {
      try {
        for (const name of used) await connection.db!.collection(name).deleteMany({});
      } finally {
        await connection.close();
      }
    },
  };
};

describeRepositoryContract(`MongooseRepository on ${mongoLabel()}`, onMongo);
describeReconciliationContract(`MongooseRepository on ${mongoLabel()}`, onMongo);

describe('MongooseRepository round trips', () => {
  let connection: Connection;
  const commands: Array<{ name: string; command: Record<string, unknown> }> = [];

  beforeAll(async () => {
    connection = await mongoose
      .createConnection(mongoUri(), { dbName: uniqueName('repository_commands'), monitorCommands: true })
      .asPromise();
    connection.getClient().on('commandStarted', (event) => {
      if (event.commandName !== 'hello' && event.commandName !== 'isMaster' && event.commandName !== 'ping') {
        commands.push({ name: event.commandName, command: event.command as Record<string, unknown> });
      }
    });
  });
  afterAll(async () => {
    await connection.db!.collection('rt_counters').deleteMany({});
    await connection.close();
  });

  async function recorded<T>(operation: () => Promise<T>): Promise<string[]> {
    commands.length = 0;
    await operation().catch(() => undefined);
    return commands.map((c) => c.name);
  }

  it('update is one conditional updateOne, success or conflict; reads are one find each', async () => {
    const repository = new CounterMongooseRepository({ connection, collection: 'rt_counters', aggregate: Counter });
    const counter = new Counter('rt', 'round trips');
    expect(await recorded(() => repository.insert(counter))).toEqual(['insert']);
    counter.increment();
    expect(await recorded(() => repository.update(counter))).toEqual(['update']);
    const update = commands[0].command as { updates: Array<{ q: unknown; u: unknown; multi?: boolean }> };
    expect(update.updates).toHaveLength(1);
    expect(update.updates[0].q).toEqual({ _id: 'rt', version: 1 });
    expect(update.updates[0].u).toEqual({ $set: { label: 'round trips', count: 1, tags: [], version: 2 } });

    const stale = (await repository.findById('rt'))!;
    await repository.update((await repository.findById('rt'))!);
    expect(await recorded(() => repository.update(stale))).toEqual(['update']);
    expect(await recorded(() => repository.findById('rt'))).toEqual(['find']);
    expect(await recorded(() => repository.currentVersion('rt'))).toEqual(['find']);
    expect(commands[0].command).toMatchObject({ filter: { _id: 'rt' }, projection: { _id: 0, version: 1 } });
    expect(await recorded(() => repository.remove(stale))).toEqual(['delete']);
    // A refused id sends nothing at all.
    expect(await recorded(() => repository.findById({ $ne: null } as unknown as string))).toEqual([]);
  });
});
