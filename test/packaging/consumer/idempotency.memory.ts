// @ddd-kit/idempotency as a memory-only user sees it: no driver installed; a run happens once
// and its repeat replays the first result.
import { strict as assert } from 'node:assert';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import {
  getIdempotencyStoreToken,
  IdempotencyConflictError,
  IdempotencyModule,
  MemoryIdempotencyStore,
  type IdempotencyStore,
} from '@ddd-kit/idempotency';
// The testing entry runs under Jest only; a consumer must still be able to type-check against it.
import type { describeIdempotencyStoreContract } from '@ddd-kit/idempotency/testing';

export type ContractSuite = typeof describeIdempotencyStoreContract;

@Module({ imports: [IdempotencyModule.forRoot()] })
class AppModule {}

export async function run(): Promise<void> {
  const app = await NestFactory.createApplicationContext(AppModule, { logger: false });
  const store = app.get<IdempotencyStore>(getIdempotencyStoreToken());
  assert.ok(store instanceof MemoryIdempotencyStore);
  let calls = 0;
  const work = async () => ({ id: ++calls });
  assert.deepEqual(await store.run({ key: 'k', fingerprint: 'f' }, work), { result: { id: 1 }, replayed: false });
  assert.deepEqual(await store.run({ key: 'k', fingerprint: 'f' }, work), { result: { id: 1 }, replayed: true });
  await assert.rejects(store.run({ key: 'k', fingerprint: 'other' }, work), IdempotencyConflictError);
  assert.equal(calls, 1);
  await app.close();
}
