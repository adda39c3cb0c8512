// The boot order of @UniqueKey aggregates: a repository whose aggregate declares unique keys
// needs PrepareKeyModule's keys, which exist only once the module's Redis client connected.
// Declared as a dependency, the repository waits for them, whatever order or speed the stores
// connect in — here behind a proxy that makes Redis slow to answer, with `machine: 0` (no
// machine-ID lease that would happen to take longer), an in-memory repository and a MongoDB one.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Module } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { Redis } from 'ioredis';
import { Aggregate, IdGeneratorModule } from '@ddd-kit/id-generator';
import { PrepareKeyModule } from '@ddd-kit/prepare-key';
import {
  AggregateRoot,
  getRepositoryToken,
  MongooseRepository,
  RepositoryModule,
  UniqueKey,
  UniqueKeyViolationError,
  type IRepository,
  type StoredDocument,
} from '@ddd-kit/repository';
import { proxyUrl, type FaultProxy } from '../support/fault-proxy/index.js';
import { mongoUri, redisUrl, uniqueName } from '../support/servers.js';
import { waitFor } from '../support/wait.js';

@Aggregate({ name: 'boot-user' })
@UniqueKey('boot-username', (user: BootUser) => user.username)
class BootUser extends AggregateRoot<string> {
  constructor(
    id: string | undefined,
    public username: string,
  ) {
    super(id);
  }
}

@Aggregate({ name: 'boot-product' })
@UniqueKey('boot-sku', (product: BootProduct) => product.sku)
class BootProduct extends AggregateRoot<string> {
  constructor(
    id: string | undefined,
    public sku: string,
  ) {
    super(id);
  }
}

class BootProductRepository extends MongooseRepository<string, BootProduct, { sku: string }> {
  protected toDocument(product: BootProduct) {
    return { sku: product.sku };
  }
  protected toAggregate(document: StoredDocument<string, { sku: string }>) {
    return new BootProduct(document._id, document.sku);
  }
}

describe('a @UniqueKey repository boots after PrepareKeyModule’s own Redis client, however slow', () => {
  let proxy: FaultProxy;
  let url: string;

  beforeAll(async () => {
    ({ proxy, url } = await proxyUrl('redis', redisUrl()));
  });

  afterAll(async () => {
    await proxy?.close();
  });

  it.each([
    ['at once', false],
    ['only once the boot has waited on it (its first reply held, however long)', true],
  ])(
    'Redis answering its first command %s: the application starts, and the keys are kept in Redis',
    async (_, late) => {
      const held = late ? proxy.holdReply({ untilReleased: true }) : undefined;
      const keyPrefix = `${uniqueName('boot')}:`;
      @Module({
        imports: [
          PrepareKeyModule.forRoot({ redis: { url, keyPrefix } }),
          IdGeneratorModule.forRoot({ machine: 0 }),
          RepositoryModule.forRoot({ uri: mongoUri(), connectionOptions: { dbName: uniqueName('boot') } }),
          RepositoryModule.forFeature([BootUser, { aggregate: BootProduct, repository: BootProductRepository }]),
        ],
      })
      class AppModule {}

      const booting = Test.createTestingModule({ imports: [AppModule] })
        .compile()
        .then((moduleRef) => moduleRef.init());
      if (held !== undefined) {
        await waitFor("Redis's first reply to be held", held.fired);
        held.release();
      }
      const app = await booting;
      try {
        const users = app.get<IRepository<string, BootUser>>(getRepositoryToken(BootUser));
        const products = app.get<IRepository<string, BootProduct>>(getRepositoryToken(BootProduct));
        await users.insert(new BootUser(undefined, 'ann'));
        await expect(users.insert(new BootUser(undefined, 'ann'))).rejects.toBeInstanceOf(UniqueKeyViolationError);
        await products.insert(new BootProduct(undefined, 'SKU-1'));
        await expect(products.insert(new BootProduct(undefined, 'SKU-1'))).rejects.toBeInstanceOf(
          UniqueKeyViolationError,
        );
        const redis = new Redis(redisUrl());
        try {
          // The seal: set at boot, once the (empty) reservations were restored.
          expect((await redis.keys(`${keyPrefix}*`)).sort()).toEqual([
            `${keyPrefix}seal`,
            `${keyPrefix}{boot-sku:SKU-1}`,
            `${keyPrefix}{boot-username:ann}`,
          ]);
        } finally {
          redis.disconnect();
        }
      } finally {
        await app.close();
        proxy.clear();
      }
    },
    30_000,
  );
});
