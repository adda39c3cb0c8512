import { describe, expect, it } from '@jest/globals';
import { InMemoryRepository } from '../backends/memory/in-memory.repository.js';
import { OptimisticLockError } from '../errors.js';
import { AggregateRoot } from './aggregate-root.js';

class Note extends AggregateRoot<string> {
  text = '';
}

describe('AggregateRoot.version: the version stored now', () => {
  it('0 while new, then what each successful write stored; a loaded copy has the stored one', async () => {
    const notes = new InMemoryRepository<string, Note>({ aggregate: Note });
    const note = Object.assign(new Note('n1'), { text: 'a' });
    expect(note.version).toBe(0);
    await notes.insert(note);
    expect(note.version).toBe(1);
    note.text = 'b';
    await notes.update(note);
    expect(note.version).toBe(2);
    expect((await notes.findById('n1'))!.version).toBe(2);
    expect(await notes.currentVersion('n1')).toBe(note.version);
  });

  it('a write that lost its optimistic lock leaves it where it was', async () => {
    const notes = new InMemoryRepository<string, Note>({ aggregate: Note });
    await notes.insert(new Note('n2'));
    const first = (await notes.findById('n2'))!;
    const second = (await notes.findById('n2'))!;
    await notes.update(first);
    await expect(notes.update(second)).rejects.toThrow(OptimisticLockError);
    expect([first.version, second.version]).toEqual([2, 1]);
  });

  it('is not data: not in the snapshot, not in JSON', async () => {
    const note = Object.assign(new Note('n3'), { text: 'x' });
    await new InMemoryRepository<string, Note>({ aggregate: Note }).insert(note);
    expect(note.toSnapshot()).toEqual({ id: 'n3', text: 'x' });
    expect(JSON.parse(JSON.stringify(note))).toEqual({ id: 'n3', text: 'x' });
  });
});
