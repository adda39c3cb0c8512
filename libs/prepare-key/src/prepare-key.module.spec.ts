import 'reflect-metadata';
import { afterEach, describe, expect, it } from '@jest/globals';
import { Inject, Injectable, Module } from '@nestjs/common';
import type { DynamicModule, INestApplicationContext, ModuleMetadata } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { MemoryPrepareKeyFactory } from './backends/memory/memory-prepare-key.factory.js';
import { InjectPrepareKey } from './decorators/inject-prepare-key.decorator.js';
import { PreparableKey } from './decorators/preparable-key.decorator.js';
import { PrepareKeyDeclarationError, PrepareKeyDisabledError, PrepareKeyStateError } from './errors.js';
import type { PrepareKeyOptionsFactory } from './interfaces/prepare-key-module-options.interface.js';
import { PrepareKey } from './prepare-key.js';
import { PrepareKeyFactory } from './prepare-key.factory.js';
import { PrepareKeyModule } from './prepare-key.module.js';
import { getPrepareKeyToken } from './prepare-key.utils.js';
import { PreparedValue, TTL_FOREVER, toTtlAt } from './prepared-value.js';

interface UsernameIndex {
  userId: string;
}

@PreparableKey('username')
abstract class UsernamePrepareKey extends PrepareKey<UsernameIndex> {
  private readonly maxLength = 20; // a field initialised by the class's own constructor

  /** A helper on top of the contract that calls `this.prepare`. */
  async reserve(username: string, userId: string): Promise<boolean> {
    if (username.length > this.maxLength) return false;
    return this.prepare(username.toLowerCase(), { userId });
  }

  async ownerOf(username: string): Promise<string | undefined> {
    return (await this.get(username.toLowerCase()))?.userId;
  }

  describe(): string {
    return `key space ${this.name}`;
  }
}

@PreparableKey()
abstract class EmailPrepareKey extends PrepareKey<string> {}

@PreparableKey('   ')
abstract class BlankNamedPrepareKey extends PrepareKey<number> {}

/** Overrides a contract method to normalise keys; the override must survive injection. */
@PreparableKey('sku-code')
abstract class SkuCodePrepareKey extends PrepareKey<string> {
  override prepare(key: string, value: string | PreparedValue<string>): Promise<boolean> {
    return super.prepare(key.toUpperCase(), value);
  }
}

/** Normalises every key in the three primitive-level methods; every composition must go through them. */
@PreparableKey('normalised-email')
abstract class NormalisedEmailPrepareKey extends PrepareKey<string> {
  override prepare(key: string, value: string | PreparedValue<string>): Promise<boolean> {
    return super.prepare(key.trim().toLowerCase(), value);
  }
  override rollback(key: string, value?: string): Promise<boolean> {
    const k = key.trim().toLowerCase();
    return value === undefined ? super.rollback(k) : super.rollback(k, value);
  }
  override getValue(key: string): Promise<PreparedValue<string> | undefined> {
    return super.getValue(key.trim().toLowerCase());
  }
}

/** Not decorated: only forFeature makes it injectable, under its simple name. */
abstract class LegacyPrepareKey extends PrepareKey<string> {}

@Injectable()
class Consumer {
  constructor(
    readonly byClass: UsernamePrepareKey,
    @InjectPrepareKey('username') readonly byName: PrepareKey<UsernameIndex>,
    @InjectPrepareKey(UsernamePrepareKey) readonly byClassToken: PrepareKey<UsernameIndex>,
    @Inject('UsernamePrepareKey') readonly bySimpleName: UsernamePrepareKey,
    readonly email: EmailPrepareKey,
    @Inject('EmailPrepareKey') readonly emailBySimpleName: EmailPrepareKey,
  ) {}
}

/** Records which names were created, so tests can see one backend key per name. */
class CountingFactory extends PrepareKeyFactory {
  readonly created: string[] = [];
  constructor(readonly inner: PrepareKeyFactory = new MemoryPrepareKeyFactory()) {
    super();
  }
  create<V>(name: string): PrepareKey<V> {
    this.created.push(name);
    return this.inner.create<V>(name);
  }
}

const apps: INestApplicationContext[] = [];

async function boot(metadata: ModuleMetadata): Promise<INestApplicationContext> {
  const moduleRef = await Test.createTestingModule(metadata).compile();
  const app = await moduleRef.init();
  apps.push(app);
  return app;
}

afterEach(async () => {
  await Promise.all(apps.splice(0).map((app) => app.close()));
});

describe('PrepareKeyModule.forRoot', () => {
  it('injects a declared key by class, by key name, by class token and by simple class name: one object', async () => {
    const app = await boot({
      imports: [PrepareKeyModule.forRoot({ factory: new MemoryPrepareKeyFactory() })],
      providers: [Consumer],
    });
    const consumer = app.get(Consumer);
    expect(consumer.byClass).toBe(consumer.byName);
    expect(consumer.byClass).toBe(consumer.byClassToken);
    expect(consumer.byClass).toBe(consumer.bySimpleName);
    expect(app.get(UsernamePrepareKey)).toBe(consumer.byClass);
    expect(app.get(getPrepareKeyToken('username'))).toBe(consumer.byClass);
    expect(consumer.email).toBe(consumer.emailBySimpleName);
    expect(consumer.email).not.toBe(consumer.byClass);
  });

  it('injects an instance of the declared class and of PrepareKey, named after the declared key', async () => {
    const app = await boot({ imports: [PrepareKeyModule.forRoot({ factory: new MemoryPrepareKeyFactory() })] });
    const usernames = app.get(UsernamePrepareKey);
    expect(usernames).toBeInstanceOf(UsernamePrepareKey);
    expect(usernames).toBeInstanceOf(PrepareKey);
    expect(usernames.name).toBe('username');
    expect(usernames.constructor.name).toBe('UsernamePrepareKey');
    expect(app.get(EmailPrepareKey).name).toBe('EmailPrepareKey'); // blank name: the simple class name
    expect(app.get(BlankNamedPrepareKey).name).toBe('BlankNamedPrepareKey');
    expect(app.get(getPrepareKeyToken('BlankNamedPrepareKey'))).toBe(app.get(BlankNamedPrepareKey));
  });

  it("runs the class's helper methods, which reach the backend through this.prepare and this.get", async () => {
    const factory = new MemoryPrepareKeyFactory();
    const app = await boot({ imports: [PrepareKeyModule.forRoot({ factory })] });
    const usernames = app.get(UsernamePrepareKey);
    expect(await usernames.reserve('Alice', 'u1')).toBe(true);
    expect(await usernames.reserve('ALICE', 'u2')).toBe(false);
    expect(await usernames.reserve('x'.repeat(21), 'u3')).toBe(false);
    expect(await usernames.ownerOf('alice')).toBe('u1');
    expect(usernames.describe()).toBe('key space username');
    // The reservation lives in the backend's key of that name.
    expect(await factory.create<UsernameIndex>('username').get('alice')).toEqual({ userId: 'u1' });
  });

  it('keeps a contract method the declared class overrides, its super call reaching the backend', async () => {
    const factory = new MemoryPrepareKeyFactory();
    const app = await boot({ imports: [PrepareKeyModule.forRoot({ factory })] });
    const skus = app.get(SkuCodePrepareKey);
    expect(await skus.prepare('ab-1', 'p1')).toBe(true);
    expect(await skus.get('AB-1')).toBe('p1');
    expect(await factory.create('sku-code').get('AB-1')).toBe('p1');
    expect(await skus.prepare('AB-1', 'p2')).toBe(false);
  });

  it('uses the overrides of prepare, rollback and getValue in every composition: usingPrepare, the key change, get', async () => {
    const factory = new MemoryPrepareKeyFactory();
    const app = await boot({ imports: [PrepareKeyModule.forRoot({ factory })] });
    const emails = app.get(NormalisedEmailPrepareKey);
    const backend = factory.create<string>('normalised-email');

    // usingPrepare prepares through the override, and its rollback goes through the override too.
    expect(await emails.usingPrepare(' Ann@X.io ', 'u1', (prepared) => prepared)).toBe(true);
    expect(await backend.get('ann@x.io')).toBe('u1');
    await expect(
      emails.usingPrepare('BOB@x.io', 'u2', () => {
        throw new Error('write failed');
      }),
    ).rejects.toThrow('write failed');
    expect(await backend.getValue('bob@x.io')).toBeUndefined();
    expect(await backend.getValue('BOB@x.io')).toBeUndefined();

    // get reads through the getValue override.
    expect(await emails.get('ANN@X.IO')).toBe('u1');

    // The key change prepares the new key and releases the old one through the overrides.
    expect(await emails.reprepare('ANN@x.io', 'u1', 'Anne@X.io', 'u1')).toBe(true);
    expect(await backend.get('anne@x.io')).toBe('u1');
    expect(await backend.getValue('ann@x.io')).toBeUndefined();
    expect(await backend.getValue('Anne@X.io')).toBeUndefined();
  });

  it('reaches the backend through every contract method, preserving the argument count of reprepare', async () => {
    const factory = new MemoryPrepareKeyFactory();
    const app = await boot({ imports: [PrepareKeyModule.forRoot({ factory })] });
    const usernames: PrepareKey<UsernameIndex> = app.get(UsernamePrepareKey);
    const backend = factory.create<UsernameIndex>('username');
    const u1 = { userId: 'u1' };
    const u2 = { userId: 'u2' };

    expect(await usernames.prepare('a', u1)).toBe(true);
    expect(await backend.getValue('a')).toEqual(new PreparedValue(u1, TTL_FOREVER));
    expect(await usernames.getValue('a')).toEqual(new PreparedValue(u1, TTL_FOREVER));
    // 2 arguments: replace an unexpired record.
    const ttlAt = Date.now() + 60_000;
    expect(await usernames.reprepare('a', toTtlAt(u1, ttlAt))).toBe(true);
    expect((await backend.getValue('a'))?.ttlAt).toBe(ttlAt);
    // 3 arguments: compare-and-set on the value.
    expect(await usernames.reprepare('a', u2, u1)).toBe(false);
    expect(await usernames.reprepare('a', u1, u2)).toBe(true);
    expect(await backend.get('a')).toEqual(u2);
    // 4 arguments: key change, with its state error.
    expect(await usernames.reprepare('a', u2, 'b', u2)).toBe(true);
    expect(await backend.getValue('a')).toBeUndefined();
    await backend.prepare('a', u1);
    await expect(usernames.reprepare('a', u2, 'c', u2)).rejects.toBeInstanceOf(PrepareKeyStateError);
    expect(await backend.getValue('c')).toBeUndefined();
    await backend.rollback('a');
    // rollback with 2 and 1 arguments.
    expect(await usernames.rollback('b', u1)).toBe(false);
    expect(await usernames.rollback('b', u2)).toBe(true);
    await backend.prepare('d', u1);
    expect(await usernames.rollback('d')).toBe(true);
    // usingPrepare and records.
    await expect(
      usernames.usingPrepare('e', u1, async (prepared) => {
        expect(prepared).toBe(true);
        throw new Error('append failed');
      }),
    ).rejects.toThrow('append failed');
    expect(await backend.getValue('e')).toBeUndefined();
    expect(await usernames.usingPrepare('f', u1, async (prepared) => prepared)).toBe(true);
    const keys: string[] = [];
    for await (const record of usernames.records({ pageSize: 1 })) keys.push(record.key);
    expect(keys).toEqual(['f']);
  });

  it('creates one backend key per name, shared by every injection route and forFeature', async () => {
    const factory = new CountingFactory();
    @Injectable()
    class FeatureConsumer {
      constructor(
        @InjectPrepareKey('username') readonly byName: PrepareKey<UsernameIndex>,
        readonly byClass: UsernamePrepareKey,
      ) {}
    }
    @Module({ imports: [PrepareKeyModule.forFeature([UsernamePrepareKey, 'username'])], providers: [FeatureConsumer] })
    class FeatureModule {}

    const app = await boot({
      imports: [PrepareKeyModule.forRoot({ factory }), FeatureModule],
      providers: [Consumer],
    });
    expect(factory.created.filter((name) => name === 'username')).toHaveLength(1);
    const feature = app.get(FeatureConsumer);
    // A bare name that a declared class owns resolves to that class's object.
    expect(feature.byName).toBe(app.get(UsernamePrepareKey));
    expect(feature.byClass).toBe(app.get(UsernamePrepareKey));
  });

  it('rejects @PreparableKey on a class that does not extend PrepareKey, and a bad name', () => {
    expect(() => {
      @PreparableKey('nope')
      class NotAKey {}
      return NotAKey;
    }).toThrow(PrepareKeyDeclarationError);
    expect(() => {
      @PreparableKey('x'.repeat(121))
      abstract class TooLong extends PrepareKey {}
      return TooLong;
    }).toThrow(PrepareKeyDeclarationError);
  });
});

describe('getPrepareKeyToken', () => {
  it('maps a class to the token of the name it declares', () => {
    expect(getPrepareKeyToken(UsernamePrepareKey)).toBe(getPrepareKeyToken('username'));
    expect(getPrepareKeyToken(EmailPrepareKey)).toBe(getPrepareKeyToken('EmailPrepareKey'));
    expect(getPrepareKeyToken(LegacyPrepareKey)).toBe(getPrepareKeyToken('LegacyPrepareKey'));
    expect(getPrepareKeyToken('username')).not.toBe(getPrepareKeyToken('sku'));
    expect(getPrepareKeyToken('username')).not.toBe('UsernamePrepareKey');
  });

  it('refuses what is not a key name or a key class', () => {
    expect(() => getPrepareKeyToken('')).toThrow(PrepareKeyDeclarationError);
    expect(() => getPrepareKeyToken(class NotAKey {} as never)).toThrow(/not a PrepareKey class/);
    expect(() => getPrepareKeyToken(PrepareKey)).toThrow(PrepareKeyDeclarationError);
  });
});

describe('PrepareKeyModule.forFeature', () => {
  @Injectable()
  class SkuService {
    constructor(
      @InjectPrepareKey('sku') readonly skus: PrepareKey<{ productId: string }>,
      readonly legacy: LegacyPrepareKey,
      @InjectPrepareKey(LegacyPrepareKey) readonly legacyByName: PrepareKey<string>,
    ) {}
  }

  @Module({
    imports: [PrepareKeyModule.forFeature([LegacyPrepareKey, 'sku'])],
    providers: [SkuService],
    exports: [SkuService],
  })
  class SkuModule {}

  it('adds a bare name as a plain PrepareKey and an undecorated class under its simple name', async () => {
    const factory = new MemoryPrepareKeyFactory();
    const app = await boot({ imports: [PrepareKeyModule.forRoot({ factory }), SkuModule] });
    const service = app.get(SkuService);
    expect(service.skus).toBeInstanceOf(PrepareKey);
    expect(service.skus.name).toBe('sku');
    expect(await service.skus.prepare('SKU-1', { productId: 'p1' })).toBe(true);
    expect(await factory.create('sku').get('SKU-1')).toEqual({ productId: 'p1' });

    expect(service.legacy).toBeInstanceOf(LegacyPrepareKey);
    expect(service.legacy.name).toBe('LegacyPrepareKey');
    expect(service.legacyByName).toBe(service.legacy);
    expect(await service.legacy.prepare('k', 'v')).toBe(true);
    expect(await factory.create('LegacyPrepareKey').get('k')).toBe('v');
  });

  it('adds a decorated class that forRoot left out of its scan', async () => {
    @Module({ imports: [PrepareKeyModule.forFeature([EmailPrepareKey])] })
    class EmailModule {}
    const app = await boot({
      imports: [PrepareKeyModule.forRoot({ factory: new MemoryPrepareKeyFactory(), include: [] }), EmailModule],
    });
    expect(() => app.get(UsernamePrepareKey)).toThrow();
    const emails = app.get(EmailPrepareKey);
    expect(emails).toBeInstanceOf(EmailPrepareKey);
    expect(app.get('EmailPrepareKey')).toBe(emails);
    expect(await emails.prepare('a@example.com', 'u1')).toBe(true);
  });
});

describe('PrepareKeyModule.forRootAsync', () => {
  const FACTORY = Symbol('FACTORY');

  @Module({ providers: [{ provide: FACTORY, useValue: new CountingFactory() }], exports: [FACTORY] })
  class BackendModule {}

  it('builds the options with useFactory and inject from imported modules', async () => {
    const app = await boot({
      imports: [
        PrepareKeyModule.forRootAsync({
          imports: [BackendModule],
          inject: [FACTORY],
          useFactory: async (factory: PrepareKeyFactory) => ({ factory }),
        }),
      ],
      providers: [Consumer],
    });
    const usernames = app.get(Consumer).byClass;
    expect(await usernames.reserve('bob', 'u1')).toBe(true);
    const factory = app.get<CountingFactory>(FACTORY, { strict: false });
    expect(factory.created).toContain('username');
    expect(await factory.create('username').get('bob')).toEqual({ userId: 'u1' });
  });

  it('builds the options with useClass', async () => {
    @Injectable()
    class PrepareKeyConfig implements PrepareKeyOptionsFactory {
      createPrepareKeyOptions() {
        return { factory: new MemoryPrepareKeyFactory() };
      }
    }
    const app = await boot({ imports: [PrepareKeyModule.forRootAsync({ useClass: PrepareKeyConfig })] });
    expect(await app.get(UsernamePrepareKey).reserve('carol', 'u1')).toBe(true);
  });

  it('builds the options with useExisting', async () => {
    @Injectable()
    class PrepareKeyConfig implements PrepareKeyOptionsFactory {
      readonly factory = new CountingFactory();
      createPrepareKeyOptions() {
        return { factory: this.factory };
      }
    }
    @Module({ providers: [PrepareKeyConfig], exports: [PrepareKeyConfig] })
    class ConfigModule {}
    const app = await boot({
      imports: [PrepareKeyModule.forRootAsync({ imports: [ConfigModule], useExisting: PrepareKeyConfig })],
    });
    expect(await app.get(UsernamePrepareKey).reserve('dave', 'u1')).toBe(true);
    expect(app.get(PrepareKeyConfig, { strict: false }).factory.created).toContain('username');
  });

  it('takes include/exclude from forRootAsync itself', async () => {
    const app = await boot({
      imports: [
        PrepareKeyModule.forRootAsync({
          include: [EmailPrepareKey],
          useFactory: () => ({ factory: new MemoryPrepareKeyFactory() }),
        }),
      ],
    });
    expect(app.get(EmailPrepareKey)).toBeInstanceOf(EmailPrepareKey);
    expect(() => app.get(UsernamePrepareKey)).toThrow();
  });
});

describe('include / exclude', () => {
  async function injectable(options: Parameters<typeof PrepareKeyModule.forRoot>[0]): Promise<string[]> {
    const app = await boot({
      imports: [PrepareKeyModule.forRoot({ factory: new MemoryPrepareKeyFactory(), ...options })],
    });
    const classes = [UsernamePrepareKey, EmailPrepareKey, BlankNamedPrepareKey, SkuCodePrepareKey];
    return classes.flatMap((cls) => {
      try {
        app.get(cls);
        return [cls.name];
      } catch {
        return [];
      }
    });
  }

  it('takes every decorated class by default', async () => {
    expect(await injectable({})).toEqual([
      'UsernamePrepareKey',
      'EmailPrepareKey',
      'BlankNamedPrepareKey',
      'SkuCodePrepareKey',
    ]);
  });

  it('include by class, key name, class name, RegExp or predicate', async () => {
    expect(await injectable({ include: UsernamePrepareKey })).toEqual(['UsernamePrepareKey']);
    expect(await injectable({ include: ['username', 'EmailPrepareKey'] })).toEqual([
      'UsernamePrepareKey',
      'EmailPrepareKey',
    ]);
    expect(await injectable({ include: /^sku-/ })).toEqual(['SkuCodePrepareKey']);
    expect(await injectable({ include: [(d) => d.name.startsWith('Blank')] })).toEqual(['BlankNamedPrepareKey']);
    expect(await injectable({ include: [] })).toEqual([]);
  });

  it('exclude, applied after include', async () => {
    expect(await injectable({ exclude: [EmailPrepareKey, 'sku-code'] })).toEqual([
      'UsernamePrepareKey',
      'BlankNamedPrepareKey',
    ]);
    expect(await injectable({ include: /^[A-Z]/, exclude: (d) => d.target === BlankNamedPrepareKey })).toEqual([
      'UsernamePrepareKey',
      'EmailPrepareKey',
      'SkuCodePrepareKey',
    ]);
  });
});

describe('enabled: false', () => {
  it('boots without a factory; injected keys are instances of their class that reject saying why', async () => {
    const app = await boot({ imports: [PrepareKeyModule.forRoot({ enabled: false })], providers: [Consumer] });
    const usernames = app.get(Consumer).byClass;
    expect(usernames).toBeInstanceOf(UsernamePrepareKey);
    expect(usernames.name).toBe('username');
    await expect(usernames.reserve('alice', 'u1')).rejects.toBeInstanceOf(PrepareKeyDisabledError);
    await expect(usernames.get('alice')).rejects.toThrow(/'username' is disabled.*enabled: false/);
    let called = false;
    await expect(usernames.usingPrepare('alice', { userId: 'u1' }, () => (called = true))).rejects.toBeInstanceOf(
      PrepareKeyDisabledError,
    );
    expect(called).toBe(false);
  });

  it('never calls the factory, for declared keys and forFeature names alike', async () => {
    const factory = new CountingFactory();
    @Module({ imports: [PrepareKeyModule.forFeature(['sku'])] })
    class SkuModule {}
    const app = await boot({ imports: [PrepareKeyModule.forRoot({ factory, enabled: false }), SkuModule] });
    const skus = app.get<PrepareKey<string>>(getPrepareKeyToken('sku'), { strict: false });
    await expect(skus.prepare('k', 'v')).rejects.toThrow(PrepareKeyDisabledError);
    expect(factory.created).toEqual([]);
  });
});

describe('several applications in one process', () => {
  it('share declarations but neither registrations nor state', async () => {
    const a = await boot({
      imports: [PrepareKeyModule.forRoot({ factory: new MemoryPrepareKeyFactory(), include: [UsernamePrepareKey] })],
    });
    const b = await boot({ imports: [PrepareKeyModule.forRoot({ factory: new MemoryPrepareKeyFactory() })] });
    const ua = a.get(UsernamePrepareKey);
    const ub = b.get(UsernamePrepareKey);
    expect(ua).not.toBe(ub);
    expect(await ua.reserve('alice', 'in-a')).toBe(true);
    expect(await ub.ownerOf('alice')).toBeUndefined();
    expect(await ub.reserve('alice', 'in-b')).toBe(true);
    expect(await ua.ownerOf('alice')).toBe('in-a');
    expect(() => a.get(EmailPrepareKey)).toThrow();
    expect(b.get(EmailPrepareKey)).toBeInstanceOf(EmailPrepareKey);
  });

  it('share state exactly when they share a factory', async () => {
    const factory = new MemoryPrepareKeyFactory();
    const a = await boot({ imports: [PrepareKeyModule.forRoot({ factory })] });
    const b = await boot({ imports: [PrepareKeyModule.forRoot({ factory })] });
    expect(await a.get(UsernamePrepareKey).reserve('alice', 'u1')).toBe(true);
    expect(await b.get(UsernamePrepareKey).reserve('alice', 'u2')).toBe(false);
  });

  it('a closed application leaves the next one unaffected', async () => {
    const first = await boot({ imports: [PrepareKeyModule.forRoot({ factory: new MemoryPrepareKeyFactory() })] });
    await first.get(UsernamePrepareKey).reserve('alice', 'u1');
    await first.close();
    apps.splice(apps.indexOf(first), 1);
    const second = await boot({ imports: [PrepareKeyModule.forRoot({ factory: new MemoryPrepareKeyFactory() })] });
    expect(await second.get(UsernamePrepareKey).ownerOf('alice')).toBeUndefined();
  });
});

describe('isGlobal: false', () => {
  it('keeps the keys to the module that imports forRoot', async () => {
    @Injectable()
    class Inner {
      constructor(readonly usernames: UsernamePrepareKey) {}
    }
    @Module({ providers: [Inner] })
    class InnerModule {}

    const local: DynamicModule = PrepareKeyModule.forRoot({ factory: new MemoryPrepareKeyFactory(), isGlobal: false });
    const app = await boot({ imports: [local], providers: [Consumer] });
    expect(app.get(Consumer).byClass).toBeInstanceOf(UsernamePrepareKey);

    await expect(
      Test.createTestingModule({
        imports: [PrepareKeyModule.forRoot({ factory: new MemoryPrepareKeyFactory(), isGlobal: false }), InnerModule],
      }).compile(),
    ).rejects.toThrow(/UsernamePrepareKey/);
  });
});
