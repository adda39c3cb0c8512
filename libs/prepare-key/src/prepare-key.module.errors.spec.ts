import 'reflect-metadata';
import { describe, expect, it } from '@jest/globals';
import { Module } from '@nestjs/common';
import type { ModuleMetadata } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { MemoryPrepareKeyFactory } from './backends/memory/memory-prepare-key.factory.js';
import { PreparableKey } from './decorators/preparable-key.decorator.js';
import { PrepareKeyFactoryMissingError, PrepareKeyModuleOptionsError, PrepareKeyNameConflictError } from './errors.js';
import { PrepareKey } from './prepare-key.js';
import { PrepareKeyModule } from './prepare-key.module.js';

// Bootstrap failures. The declarations below conflict on purpose, so every application in
// this file that is not about the conflict narrows its scan with `include`.

@PreparableKey('username')
abstract class UsernamePrepareKey extends PrepareKey<string> {}

@PreparableKey('dup')
abstract class FirstDupPrepareKey extends PrepareKey<string> {}

@PreparableKey('dup')
abstract class SecondDupPrepareKey extends PrepareKey<string> {}

function declareNamed(keyName: string) {
  @PreparableKey(keyName)
  abstract class SameNamePrepareKey extends PrepareKey<string> {}
  return SameNamePrepareKey;
}
const SameNameA = declareNamed('same-a');
const SameNameB = declareNamed('same-b');

async function bootstrapError(metadata: ModuleMetadata): Promise<Error> {
  try {
    const moduleRef = await Test.createTestingModule(metadata).compile();
    await moduleRef.close();
  } catch (error) {
    return error as Error;
  }
  throw new Error('the application booted, but it should have failed');
}

describe('a declared key without a factory', () => {
  it('fails at bootstrap naming the key and saying how to configure a factory', async () => {
    const error = await bootstrapError({ imports: [PrepareKeyModule.forRoot({ include: [UsernamePrepareKey] })] });
    expect(error).toBeInstanceOf(PrepareKeyFactoryMissingError);
    expect(error.message).toContain(`'username' (UsernamePrepareKey)`);
    expect(error.message).toContain('PrepareKeyModule.forRoot({ factory: new MemoryPrepareKeyFactory() })');
    expect(error.message).toContain('new RedisPrepareKeyFactory(redis)');
    expect((error as PrepareKeyFactoryMissingError).keys).toEqual([`'username' (UsernamePrepareKey)`]);
  });

  it('fails the same way when forRootAsync produces no factory', async () => {
    const error = await bootstrapError({
      imports: [PrepareKeyModule.forRootAsync({ include: ['username'], useFactory: async () => ({}) })],
    });
    expect(error).toBeInstanceOf(PrepareKeyFactoryMissingError);
    expect(error.message).toMatch(/'username'.*useFactory/);
  });

  it('names a forFeature key without a factory', async () => {
    @Module({ imports: [PrepareKeyModule.forFeature(['sku'])] })
    class SkuModule {}
    const error = await bootstrapError({ imports: [PrepareKeyModule.forRoot({ include: [] }), SkuModule] });
    expect(error).toBeInstanceOf(PrepareKeyFactoryMissingError);
    expect(error.message).toContain(`PrepareKey 'sku' is declared`);
  });

  it('names a forFeature key when no forRoot was imported at all', async () => {
    @Module({ imports: [PrepareKeyModule.forFeature(['sku', UsernamePrepareKey])] })
    class SkuModule {}
    const error = await bootstrapError({ imports: [SkuModule] });
    expect(error).toBeInstanceOf(PrepareKeyFactoryMissingError);
    expect(error.message).toMatch(/'(sku|username)'.*forFeature.*no PrepareKeyModule\.forRoot\(\)/);
  });

  it('boots when nothing is declared, or when disabled', async () => {
    const none = await Test.createTestingModule({ imports: [PrepareKeyModule.forRoot({ include: [] })] }).compile();
    await none.close();
    const disabled = await Test.createTestingModule({
      imports: [PrepareKeyModule.forRoot({ include: [UsernamePrepareKey], enabled: false })],
    }).compile();
    expect(disabled.get(UsernamePrepareKey)).toBeInstanceOf(UsernamePrepareKey);
    await disabled.close();
  });
});

describe('two classes declaring one name', () => {
  it('fail at bootstrap naming both', async () => {
    const error = await bootstrapError({
      imports: [PrepareKeyModule.forRoot({ factory: new MemoryPrepareKeyFactory() })],
    });
    expect(error).toBeInstanceOf(PrepareKeyNameConflictError);
    expect(error.message).toContain(`'dup'`);
    expect(error.message).toContain('FirstDupPrepareKey');
    expect(error.message).toContain('SecondDupPrepareKey');
    expect(error.message).toMatch(/exclude/);
  });

  it('boot once one of them is excluded', async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [
        PrepareKeyModule.forRoot({
          factory: new MemoryPrepareKeyFactory(),
          exclude: [SecondDupPrepareKey, SameNameB],
        }),
      ],
    }).compile();
    expect(moduleRef.get(FirstDupPrepareKey).name).toBe('dup');
    await moduleRef.close();
  });

  it('fail when forFeature adds a class whose name forRoot already gave another class', async () => {
    @Module({ imports: [PrepareKeyModule.forFeature([SecondDupPrepareKey])] })
    class FeatureModule {}
    const error = await bootstrapError({
      imports: [
        PrepareKeyModule.forRoot({ factory: new MemoryPrepareKeyFactory(), include: [FirstDupPrepareKey] }),
        FeatureModule,
      ],
    });
    expect(error).toBeInstanceOf(PrepareKeyNameConflictError);
    expect(error.message).toContain('FirstDupPrepareKey');
    expect(error.message).toContain('SecondDupPrepareKey');
  });

  it('two classes with one simple name (the @Inject string token) fail too', async () => {
    const error = await bootstrapError({
      imports: [PrepareKeyModule.forRoot({ factory: new MemoryPrepareKeyFactory(), include: [SameNameA, SameNameB] })],
    });
    expect(error).toBeInstanceOf(PrepareKeyNameConflictError);
    expect(error.message).toContain(`SameNamePrepareKey ('same-a')`);
    expect(error.message).toContain(`SameNamePrepareKey ('same-b')`);
  });
});

describe('invalid options fail at bootstrap with PrepareKeyModuleOptionsError', () => {
  const include = [UsernamePrepareKey];

  it.each([
    ['a factory that is not one', { include, factory: {} as never }, /factory must be a PrepareKeyFactory/],
    ['a non-boolean enabled', { include, enabled: 'yes' as never, factory: new MemoryPrepareKeyFactory() }, /enabled/],
    ['an include entry of the wrong kind', { include: [42 as never] }, /include: number is not/],
    ['an exclude entry of the wrong kind', { exclude: [null as never] }, /exclude: null is not/],
  ])('%s', async (_, options, message) => {
    const error = await bootstrapError({ imports: [PrepareKeyModule.forRoot(options)] });
    expect(error).toBeInstanceOf(PrepareKeyModuleOptionsError);
    expect(error.message).toMatch(message);
  });

  it('include/exclude returned by forRootAsync useFactory', async () => {
    const error = await bootstrapError({
      imports: [
        PrepareKeyModule.forRootAsync({
          include,
          useFactory: () => ({ factory: new MemoryPrepareKeyFactory(), exclude: [UsernamePrepareKey] }) as never,
        }),
      ],
    });
    expect(error).toBeInstanceOf(PrepareKeyModuleOptionsError);
    expect(error.message).toMatch(/pass them to forRootAsync/);
  });

  it('forRootAsync without useFactory, useClass or useExisting', async () => {
    const error = await bootstrapError({ imports: [PrepareKeyModule.forRootAsync({ include })] });
    expect(error).toBeInstanceOf(PrepareKeyModuleOptionsError);
    expect(error.message).toMatch(/useFactory, useClass or useExisting/);
  });
});
