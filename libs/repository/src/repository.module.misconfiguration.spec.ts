import { describe, expect, it } from '@jest/globals';
import { Injectable, Module } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { AggregateRoot } from './aggregate/aggregate-root.js';
import { InMemoryRepository } from './backends/memory/in-memory.repository.js';
import { RepositoryConfigurationError } from './errors.js';
import { RepositoryModule } from './repository.module.js';

// A forgotten RepositoryModule.forRoot must be reported as that step, with what to import,
// not as Nest's "can't resolve RepositoryBinder at index [0]" about a class users never see.

class Invoice extends AggregateRoot<string> {}

@Injectable()
class InvoiceRepository extends InMemoryRepository<string, Invoice> {}

async function bootstrapError(imports: NonNullable<Parameters<typeof Module>[0]['imports']>): Promise<Error> {
  try {
    const moduleRef = await Test.createTestingModule({ imports }).compile();
    await moduleRef.close();
  } catch (error) {
    return error as Error;
  }
  throw new Error('the application booted, but it should have failed');
}

describe('RepositoryModule.forFeature without RepositoryModule.forRoot', () => {
  it.each([
    ['an aggregate alone (in-memory repository)', [Invoice]],
    ['an aggregate with its repository class', [{ aggregate: Invoice, repository: InvoiceRepository }]],
  ])('%s fails naming the aggregate and the missing forRoot', async (_, features) => {
    const error = await bootstrapError([RepositoryModule.forFeature(features)]);
    expect(error).toBeInstanceOf(RepositoryConfigurationError);
    expect(error.message).toContain('RepositoryModule.forFeature([Invoice]) needs RepositoryModule.forRoot()');
    expect(error.message).not.toContain('RepositoryBinder');
  });

  it('boots once forRoot is imported', async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [RepositoryModule.forRoot(), RepositoryModule.forFeature([Invoice])],
    }).compile();
    await moduleRef.close();
  });
});
