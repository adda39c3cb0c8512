// @ddd-kit/transactional-adapter-pg on pg: @Transactional commits and rolls back on a real
// server, and a PostgresRepository on the same pool joins the transaction.
import { strict as assert } from 'node:assert';
import { Injectable, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ClsModule } from 'nestjs-cls';
import { ClsPluginTransactional, Transactional } from '@nestjs-cls/transactional';
import {
  AggregateRoot,
  getRepositoryPoolToken,
  InjectRepository,
  PostgresRepository,
  RepositoryModule,
  type IRepository,
  type StoredRow,
} from '@ddd-kit/repository';
import { runInTransaction, TransactionalAdapterPg } from '@ddd-kit/transactional-adapter-pg';
import pg from 'pg';
import { requiredEnv, RUN_ID } from './env.js';

const TABLE = `${RUN_ID}_tx_notes`;

class Note extends AggregateRoot<string> {
  text = '';
}

class NoteRepository extends PostgresRepository<string, Note, { text: string }> {
  protected readonly table = TABLE;
  protected readonly columns = { text: 'text NOT NULL' };
  protected toRow(note: Note) {
    return { text: note.text };
  }
  protected toAggregate(row: StoredRow<string, { text: string }>): Note {
    const note = new Note(row.id);
    note.text = row.text;
    return note;
  }
}

@Injectable()
class Notes {
  constructor(@InjectRepository(Note) readonly repository: IRepository<string, Note>) {}

  @Transactional()
  async write(id: string, fail: boolean): Promise<void> {
    const note = new Note(id);
    note.text = 'x';
    await this.repository.insert(note);
    if (fail) throw new Error('rolled back');
  }
}

export async function run(): Promise<void> {
  @Module({
    imports: [
      RepositoryModule.forRoot({ postgres: { url: requiredEnv('DATABASE_URL'), poolOptions: { max: 2 } } }),
      RepositoryModule.forFeature([{ aggregate: Note, repository: NoteRepository }]),
      ClsModule.forRoot({
        global: true,
        plugins: [
          new ClsPluginTransactional({ adapter: new TransactionalAdapterPg({ poolToken: getRepositoryPoolToken() }) }),
        ],
      }),
    ],
    providers: [Notes],
  })
  class AppModule {}
  const app = await NestFactory.createApplicationContext(AppModule, { logger: false });
  const pool = app.get<pg.Pool>(getRepositoryPoolToken());
  try {
    const notes = app.get(Notes);
    await notes.write('kept', false);
    await assert.rejects(notes.write('dropped', true), /rolled back/);
    assert.equal(await notes.repository.currentVersion('kept'), 1);
    assert.equal(await notes.repository.currentVersion('dropped'), -1);
    await assert.rejects(
      runInTransaction(pool, async (client) => {
        await client.query(`UPDATE "${TABLE}" SET text = $1`, ['changed']);
        throw new Error('undone');
      }),
      /undone/,
    );
    assert.equal((await notes.repository.findById('kept'))?.text, 'x');
  } finally {
    await pool.query(`DROP TABLE IF EXISTS "${TABLE}"`);
    await app.close();
  }
}
