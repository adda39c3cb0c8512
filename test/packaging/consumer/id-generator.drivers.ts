// @ddd-kit/id-generator on Redis (ioredis): a machine ID leased by RedisMachineIdDistributor
// and released on close, and SegmentId blocks.
import { strict as assert } from 'node:assert';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { GlobalIdGenerator, IdGeneratorModule, RedisMachineIdDistributor, SegmentId } from '@ddd-kit/id-generator';
import { Redis } from 'ioredis';
import { requiredEnv, RUN_ID } from './env.js';

export async function run(): Promise<void> {
  const redis = new Redis(requiredEnv('REDIS_URL'), { lazyConnect: true });
  const keyPrefix = `${RUN_ID}:machine-id:`;
  try {
    await redis.connect();
    @Module({
      imports: [IdGeneratorModule.forRoot({ machine: new RedisMachineIdDistributor(redis, { keyPrefix }), namespace: 'packaging' })],
    })
    class AppModule {}
    const app = await NestFactory.createApplicationContext(AppModule, { logger: false });
    try {
      assert.match(app.get(GlobalIdGenerator).generate(), /^[0-9A-Za-z]{15}$/);
    } finally {
      await app.close();
    }

    const segments = await new SegmentId({ redis, key: `${RUN_ID}:segment`, segmentSize: 10 }).ready();
    try {
      const numbers: number[] = [];
      for (let i = 0; i < 25; i++) numbers.push(Number(await segments.generateAsync()));
      assert.deepEqual(numbers, Array.from({ length: 25 }, (_, i) => i + 1));
    } finally {
      segments.close();
    }
  } finally {
    const keys = await redis.keys(`${RUN_ID}:*`);
    if (keys.length > 0) await redis.del(...keys);
    redis.disconnect();
  }
}
