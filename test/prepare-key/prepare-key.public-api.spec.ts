import 'reflect-metadata';
import { afterAll, describe, expect, it } from '@jest/globals';
import { Inject, Injectable } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import type { TestingModule } from '@nestjs/testing';
import {
  getPrepareKeyToken,
  InjectPrepareKey,
  MemoryPrepareKeyFactory,
  PreparableKey,
  PreparedValue,
  PrepareKey,
  PrepareKeyFactory,
  PrepareKeyModule,
  PrepareKeyStateError,
  toForever,
  toTtlAt,
  TTL_FOREVER,
} from '@ddd-kit/prepare-key';
import { describePrepareKeyContract } from '@ddd-kit/prepare-key/testing';

// The public surface exactly as an application imports it: package name, not source paths.

interface UsernameIndex {
  userId: string;
}

@PreparableKey('username')
abstract class UsernamePrepareKey extends PrepareKey<UsernameIndex> {}

@PreparableKey()
abstract class SkuPrepareKey extends PrepareKey<{ productId: string }> {}

@Injectable()
class RegisterUser {
  constructor(
    readonly byClass: UsernamePrepareKey,
    @InjectPrepareKey('username') readonly byName: PrepareKey<UsernameIndex>,
    @Inject('UsernamePrepareKey') readonly bySimpleName: UsernamePrepareKey,
    @Inject('SkuPrepareKey') readonly skus: SkuPrepareKey,
  ) {}

  register(username: string, userId: string): Promise<string> {
    return this.byClass.usingPrepare(username, { userId }, async (prepared) => {
      if (!prepared) throw new Error(`username ${username} is already reserved`);
      return userId;
    });
  }
}

describe('@ddd-kit/prepare-key public values', () => {
  it('TTL_FOREVER is 6666-06-06 UTC and marks forever values', () => {
    expect(TTL_FOREVER).toBe(148204944000000);
    expect(TTL_FOREVER).toBe(Date.UTC(6666, 5, 6));
    const forever = toForever({ userId: 'u1' });
    expect(forever).toBeInstanceOf(PreparedValue);
    expect(forever.value).toEqual({ userId: 'u1' });
    expect(forever.ttlAt).toBe(TTL_FOREVER);
    expect(forever.isForever).toBe(true);
    expect(forever.isExpired()).toBe(false);
  });

  it('toTtlAt keeps an absolute ttlAt; expired once the clock reaches it', () => {
    const prepared = toTtlAt('v', 1_000);
    expect(prepared.ttlAt).toBe(1_000);
    expect(prepared.isForever).toBe(false);
    expect(prepared.isExpired(999)).toBe(false);
    expect(prepared.isExpired(1_000)).toBe(true);
    expect(prepared.isExpired()).toBe(true);
  });

  it('MemoryPrepareKeyFactory is a PrepareKeyFactory', () => {
    expect(new MemoryPrepareKeyFactory()).toBeInstanceOf(PrepareKeyFactory);
  });
});

describe('@ddd-kit/prepare-key in a Nest application', () => {
  let moduleRef: TestingModule;
  const factory = new MemoryPrepareKeyFactory();

  afterAll(async () => {
    await moduleRef?.close();
  });

  it('injects declared keys by class, key name and simple class name, backed by the factory', async () => {
    moduleRef = await Test.createTestingModule({
      imports: [PrepareKeyModule.forRoot({ factory })],
      providers: [RegisterUser],
    }).compile();
    const service = moduleRef.get(RegisterUser);
    expect(service.byClass).toBeInstanceOf(UsernamePrepareKey);
    expect(service.byName).toBe(service.byClass);
    expect(service.bySimpleName).toBe(service.byClass);
    expect(service.skus).toBeInstanceOf(SkuPrepareKey);
    expect(service.skus.name).toBe('SkuPrepareKey');
    expect(moduleRef.get(getPrepareKeyToken(UsernamePrepareKey))).toBe(service.byClass);

    expect(await service.register('alice', 'u1')).toBe('u1');
    await expect(service.register('alice', 'u2')).rejects.toThrow('already reserved');
    expect(await factory.create('username').get('alice')).toEqual({ userId: 'u1' });

    await service.byClass.prepare('bob', { userId: 'u3' });
    await expect(
      service.byClass.reprepare('bob', { userId: 'someone-else' }, 'robert', { userId: 'u3' }),
    ).rejects.toBeInstanceOf(PrepareKeyStateError);
    expect(await service.byClass.get('robert')).toBeUndefined();
  });
});

// The contract suite through its package subpath, as a third-party backend would run it.
describePrepareKeyContract('memory (via @ddd-kit/prepare-key/testing)', () => ({
  factory: new MemoryPrepareKeyFactory({ retentionMs: 60_000 }),
}));
