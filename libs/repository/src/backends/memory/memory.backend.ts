import type { RepositoryBackend } from '../repository-backend.interface.js';
import { InMemoryOutboxStore } from './in-memory-outbox.store.js';
import { InMemoryRepository } from './in-memory.repository.js';

/**
 * The embedded backend, always present: InMemoryRepository (the ready-made repository of a
 * forFeature entry without a class) and, with the outbox on, an InMemoryOutboxStore beside it.
 * Nothing to connect, close or ping.
 */
export class MemoryBackend implements RepositoryBackend {
  readonly name = 'memory';

  owns(repository: object): boolean {
    return repository instanceof InMemoryRepository;
  }

  configure(): void {
    // An in-memory repository needs nothing beyond what every repository gets.
  }

  createOutboxStore(): InMemoryOutboxStore {
    return new InMemoryOutboxStore();
  }

  createRepository(): InMemoryRepository<any, any> {
    return new InMemoryRepository();
  }
}
