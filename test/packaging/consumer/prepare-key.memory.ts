// @ddd-kit/prepare-key as a memory-only user sees it: no driver installed, a Nest app that
// declares a key and injects it by class and by name.
import { strict as assert } from 'node:assert';
import { Inject, Injectable, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import {
  InjectPrepareKey,
  MemoryPrepareKeyFactory,
  PreparableKey,
  PrepareKey,
  PrepareKeyModule,
  PrepareKeyStateError,
  toTtlAt,
  TTL_FOREVER,
} from '@ddd-kit/prepare-key';
// The testing entry runs under Jest only; a consumer must still be able to type-check against it.
import type { describePrepareKeyContract } from '@ddd-kit/prepare-key/testing';

export type ContractSuite = typeof describePrepareKeyContract;

interface UsernameIndex {
  userId: string;
}

@PreparableKey('username')
abstract class UsernamePrepareKey extends PrepareKey<UsernameIndex> {
  async isFree(username: string): Promise<boolean> {
    return (await this.get(username)) === undefined;
  }
}

@Injectable()
class Registrations {
  constructor(
    readonly byClass: UsernamePrepareKey,
    @InjectPrepareKey('username') readonly byName: PrepareKey<UsernameIndex>,
    @Inject('UsernamePrepareKey') readonly bySimpleName: UsernamePrepareKey,
  ) {}
}

@Module({ imports: [PrepareKeyModule.forRoot({ factory: new MemoryPrepareKeyFactory() })], providers: [Registrations] })
class AppModule {}

export async function run(): Promise<void> {
  const app = await NestFactory.createApplicationContext(AppModule, { logger: false });
  try {
    const { byClass, byName, bySimpleName } = app.get(Registrations);
    assert.ok(byClass instanceof UsernamePrepareKey);
    assert.equal(await byClass.prepare('alice', { userId: '1' }), true);
    assert.equal(await byName.prepare('alice', { userId: '2' }), false);
    assert.deepEqual(await bySimpleName.get('alice'), { userId: '1' });
    assert.equal((await byName.getValue('alice'))?.ttlAt, TTL_FOREVER);
    assert.equal(await byClass.isFree('alice'), false);
    assert.equal(
      await byClass.reprepare('alice', { userId: '1' }, 'alicia', toTtlAt({ userId: '1' }, Date.now() + 60_000)),
      true,
    );
    await assert.rejects(byClass.reprepare('bob', { userId: '9' }, 'robert', { userId: '9' }), PrepareKeyStateError);
    assert.equal(await byClass.isFree('alice'), true);
    assert.equal(await byClass.rollback('alicia', { userId: '1' }), true);
  } finally {
    await app.close();
  }
}
