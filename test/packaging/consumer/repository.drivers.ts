// @ddd-kit/repository on its drivers: a MongooseRepository (mongoose) and a PostgresRepository
// (pg) behind RepositoryModule.
import { strict as assert } from 'node:assert';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Aggregate, IdGeneratorModule } from '@ddd-kit/id-generator';
import {
  AggregateRoot,
  getRepositoryToken,
  MongooseRepository,
  OptimisticLockError,
  PostgresRepository,
  RepositoryModule,
  type StoredDocument,
  type StoredRow,
} from '@ddd-kit/repository';
import mongoose from 'mongoose';
import pg from 'pg';
import { clearCollections, requiredEnv, RUN_ID } from './env.js';

interface NoteDocument {
  text: string;
}

@Aggregate({ name: 'note' })
class Note extends AggregateRoot<string> {
  text = '';
}

class NoteRepository extends MongooseRepository<string, Note, NoteDocument> {
  protected toDocument(note: Note): NoteDocument {
    return { text: note.text };
  }

  protected toAggregate(document: StoredDocument<string, NoteDocument>): Note {
    const note = new Note(document._id);
    note.text = document.text;
    return note;
  }
}

@Aggregate({ name: 'memo' })
class Memo extends AggregateRoot<string> {
  text = '';
}

const MEMO_TABLE = `${RUN_ID}_memos`;

class MemoRepository extends PostgresRepository<string, Memo, NoteDocument> {
  protected readonly table = MEMO_TABLE;
  protected readonly columns = { text: 'text NOT NULL' };

  protected toRow(memo: Memo): NoteDocument {
    return { text: memo.text };
  }

  protected toAggregate(row: StoredRow<string, NoteDocument>): Memo {
    const memo = new Memo(row.id);
    memo.text = row.text;
    return memo;
  }
}

export async function run(): Promise<void> {
  await onMongo();
  await onPostgres();
}

async function onPostgres(): Promise<void> {
  const pool = new pg.Pool({ connectionString: requiredEnv('DATABASE_URL'), max: 2 });
  try {
    @Module({
      imports: [
        IdGeneratorModule.forRoot({ machine: 5 }),
        RepositoryModule.forRoot({ postgres: { pool } }),
        RepositoryModule.forFeature([{ aggregate: Memo, repository: MemoRepository }]),
      ],
    })
    class AppModule {}
    const app = await NestFactory.createApplicationContext(AppModule, { logger: false });
    try {
      const memos = app.get<MemoRepository>(getRepositoryToken(Memo));
      const memo = new Memo();
      memo.text = 'first';
      await memos.insert(memo);
      const [a, b] = [await memos.findById(memo.id), await memos.findById(memo.id)];
      a!.text = 'second';
      await memos.update(a!);
      b!.text = 'lost';
      await assert.rejects(memos.update(b!), OptimisticLockError);
      assert.equal((await memos.findById(memo.id))?.text, 'second');
      assert.equal((await pool.query(`SELECT version FROM "${MEMO_TABLE}"`)).rows[0].version, '2');
    } finally {
      await app.close();
    }
  } finally {
    await pool.query(`DROP TABLE IF EXISTS "${MEMO_TABLE}"`);
    await pool.end();
  }
}

async function onMongo(): Promise<void> {
  const connection = await mongoose
    .createConnection(`${requiredEnv('MONGODB_URI').replace(/\/+$/, '')}/${RUN_ID}`)
    .asPromise();
  try {
    @Module({
      imports: [
        IdGeneratorModule.forRoot({ machine: 4 }),
        RepositoryModule.forRoot({ connection }),
        RepositoryModule.forFeature([{ aggregate: Note, repository: NoteRepository, collection: 'notes' }]),
      ],
    })
    class AppModule {}
    const app = await NestFactory.createApplicationContext(AppModule, { logger: false });
    try {
      const notes = app.get<NoteRepository>(getRepositoryToken(Note));
      const note = new Note();
      note.text = 'first';
      await notes.insert(note);
      const [a, b] = [await notes.findById(note.id), await notes.findById(note.id)];
      a!.text = 'second';
      await notes.update(a!);
      b!.text = 'lost';
      await assert.rejects(notes.update(b!), OptimisticLockError);
      assert.equal((await notes.findById(note.id))?.text, 'second');
      assert.equal(await connection.collection('notes').countDocuments(), 1);
    } finally {
      await app.close();
    }
    await clearCollections(connection.db!, ['notes']);
  } finally {
    await connection.close();
  }
}
