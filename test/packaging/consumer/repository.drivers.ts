// @ddd-kit/repository on MongoDB (mongoose): a MongooseRepository behind RepositoryModule.
import { strict as assert } from 'node:assert';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Aggregate, IdGeneratorModule } from '@ddd-kit/id-generator';
import { AggregateRoot, getRepositoryToken, MongooseRepository, OptimisticLockError, RepositoryModule, type StoredDocument } from '@ddd-kit/repository';
import mongoose from 'mongoose';
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

export async function run(): Promise<void> {
  const connection = await mongoose.createConnection(`${requiredEnv('MONGODB_URI').replace(/\/+$/, '')}/${RUN_ID}`).asPromise();
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
