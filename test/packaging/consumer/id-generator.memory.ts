// @ddd-kit/id-generator with a fixed machine ID: the global generator and one per aggregate.
import { strict as assert } from 'node:assert';
import { Injectable, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import {
  Aggregate,
  AggregateIdGeneratorRegistrar,
  CosIdGenerator,
  generateGlobalId,
  GlobalIdGenerator,
  IdGeneratorModule,
  NotInitializedGlobalIdGeneratorError,
  SnowflakeId,
  type IdGenerator,
} from '@ddd-kit/id-generator';
// The testing entry runs under Jest only; a consumer must still be able to type-check against it.
import type { describeMachineIdDistributorContract } from '@ddd-kit/id-generator/testing';

export type MachineIdContractSuite = typeof describeMachineIdDistributorContract;

@Aggregate({ name: 'invoice', context: 'billing' })
class Invoice {}

@Injectable()
class Ids {
  constructor(
    readonly global: GlobalIdGenerator,
    readonly aggregates: AggregateIdGeneratorRegistrar,
  ) {}
}

@Module({ imports: [IdGeneratorModule.forRoot({ machine: 7, namespace: 'packaging' })], providers: [Ids] })
class AppModule {}

export async function run(): Promise<void> {
  assert.throws(() => generateGlobalId(), NotInitializedGlobalIdGeneratorError);
  const app = await NestFactory.createApplicationContext(AppModule, { logger: false });
  try {
    const { global, aggregates } = app.get(Ids);
    const ids = new Set(Array.from({ length: 1_000 }, () => global.generate()));
    assert.equal(ids.size, 1_000);
    assert.equal(CosIdGenerator.parse(global.generate()).machineId, 7);
    const invoices: IdGenerator = aggregates.get(Invoice);
    assert.match(invoices.generate(), /^[0-9A-Za-z]{15}$/);
    assert.match(generateGlobalId(), /^[0-9A-Za-z]{15}$/);
  } finally {
    await app.close();
  }
  const snowflake = new SnowflakeId({ machineId: 1 });
  assert.ok(snowflake.generate() < snowflake.generate());
}
