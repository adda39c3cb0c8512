import { describe, expect, it } from '@jest/globals';
import { Module } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { Aggregate } from '@ddd-kit/id-generator';
import {
  MemoryPrepareKeyFactory,
  PreparableKey,
  PrepareKey,
  PrepareKeyModule,
  type PreparedValue,
} from '@ddd-kit/prepare-key';
import {
  AggregateRoot,
  getRepositoryToken,
  reconcileUniqueKeys,
  RepositoryConfigurationError,
  RepositoryModule,
  UniqueKey,
  UniqueKeyViolationError,
  type InMemoryRepository,
  type UniqueKeyOwner,
} from '@ddd-kit/repository';

@Aggregate({ name: 'account' })
@UniqueKey('login', (account: Account) => account.login)
@UniqueKey('sku', (account: Account) => account.sku)
class Account extends AggregateRoot<string> {
  constructor(
    id: string,
    public login: string,
    public sku: number | null = null,
  ) {
    super(id);
  }
}

/** The application declares the 'login' key itself, normalising keys: the repository must use that object. */
@PreparableKey('login')
abstract class LoginPrepareKey extends PrepareKey<UniqueKeyOwner> {
  override prepare(key: string, value: UniqueKeyOwner | PreparedValue<UniqueKeyOwner>): Promise<boolean> {
    return super.prepare(key.toLowerCase(), value);
  }
  override getValue(key: string): Promise<PreparedValue<UniqueKeyOwner> | undefined> {
    return super.getValue(key.toLowerCase());
  }
  override rollback(key: string, value?: UniqueKeyOwner): Promise<boolean> {
    return value === undefined ? super.rollback(key.toLowerCase()) : super.rollback(key.toLowerCase(), value);
  }
  override reprepare(...args: [string, ...unknown[]]): Promise<boolean> {
    const [key, ...rest] = args;
    return (super.reprepare as (...a: unknown[]) => Promise<boolean>)(key.toLowerCase(), ...rest);
  }
}

describe('@UniqueKey with RepositoryModule and PrepareKeyModule', () => {
  it('keeps the keys with the PrepareKeys of PrepareKeyModule: a declared class (its overrides used) or a bare name', async () => {
    void LoginPrepareKey;
    const factory = new MemoryPrepareKeyFactory();
    @Module({
      imports: [
        PrepareKeyModule.forRoot({ factory }),
        RepositoryModule.forRoot({}),
        RepositoryModule.forFeature([Account]),
      ],
    })
    class AppModule {}
    const app = await Test.createTestingModule({ imports: [AppModule] }).compile();
    await app.init();
    try {
      const accounts = app.get<InMemoryRepository<string, Account>>(getRepositoryToken(Account));
      await accounts.insert(new Account('a1', 'Ann', 42));
      // 'login' through LoginPrepareKey (case-folded), 'sku' through the backend's plain key.
      expect(await factory.create('login').get('ann')).toEqual({
        aggregate: 'account',
        id: 'a1',
        at: expect.any(Number),
      });
      expect(await factory.create('sku').get('42')).toMatchObject({ id: 'a1' });
      await expect(accounts.insert(new Account('a2', 'ANN'))).rejects.toBeInstanceOf(UniqueKeyViolationError);
      await expect(accounts.insert(new Account('a3', 'bob', 42))).rejects.toMatchObject({ name: 'sku', key: '42' });
      expect(await factory.create('login').get('bob')).toBeUndefined();
      const report = await reconcileUniqueKeys(accounts, { graceMs: 0 });
      expect(report).toMatchObject({ live: 2, released: 0, restored: 0, failed: 0 });
    } finally {
      await app.close();
    }
  });

  it('fails at bootstrap, saying what to import, when the aggregate declares unique keys and PrepareKeyModule is missing', async () => {
    @Module({ imports: [RepositoryModule.forRoot({}), RepositoryModule.forFeature([Account])] })
    class AppModule {}
    const attempt = Test.createTestingModule({ imports: [AppModule] }).compile();
    await expect(attempt).rejects.toBeInstanceOf(RepositoryConfigurationError);
    await expect(Test.createTestingModule({ imports: [AppModule] }).compile()).rejects.toThrow(
      /PrepareKeyModule\.forRoot/,
    );
  });

  it('refuses a unique key value that is neither a string nor a finite number, writing nothing', async () => {
    const factory = new MemoryPrepareKeyFactory();
    @Module({
      imports: [
        PrepareKeyModule.forRoot({ factory }),
        RepositoryModule.forRoot({}),
        RepositoryModule.forFeature([Account]),
      ],
    })
    class AppModule {}
    const app = await Test.createTestingModule({ imports: [AppModule] }).compile();
    try {
      const accounts = app.get<InMemoryRepository<string, Account>>(getRepositoryToken(Account));
      const bad = new Account('a1', { $ne: null } as unknown as string);
      await expect(accounts.insert(bad)).rejects.toThrow(/unique key is a string/);
      expect(await accounts.findById('a1')).toBeNull();
      expect(() => UniqueKey('', () => 'x')).toThrow(RepositoryConfigurationError);
    } finally {
      await app.close();
    }
  });
});
