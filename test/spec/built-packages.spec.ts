// SPEC §0: after `npm run build`, plain Node.js ESM imports every library by package name
// from the repository root (CI builds before it tests). The `/testing` entries are left out:
// they run inside Jest, whose globals refuse to load anywhere else.
import { describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { assertBuilt } from '../support/built.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

const expected: Record<string, string[]> = {
  '@ddd-kit/prepare-key': [
    'PrepareKey',
    'PreparedValue',
    'TTL_FOREVER',
    'toForever',
    'toTtlAt',
    'PrepareKeyModule',
    'PreparableKey',
    'InjectPrepareKey',
    'getPrepareKeyToken',
    'PrepareKeyStateError',
    'MemoryPrepareKeyFactory',
    'RedisPrepareKeyFactory',
    'MongoPrepareKeyFactory',
    'reconcileReservations',
  ],
  '@ddd-kit/id-generator': [
    'SnowflakeId',
    'SafeJsSnowflakeId',
    'CosIdGenerator',
    'ClockSync',
    'NanoIdGenerator',
    'SegmentId',
    'ClockBackwardsError',
    'ManualMachineIdDistributor',
    'StatefulSetMachineIdDistributor',
    'RedisMachineIdDistributor',
    'MachineIdOverflowError',
    'IdGeneratorModule',
    'GlobalIdGenerator',
    'generateGlobalId',
    'NotInitializedGlobalIdGeneratorError',
    'Aggregate',
    'AggregateIdGeneratorRegistrar',
    'AggregateIdGeneratorFactory',
    'Order',
    'generateId',
  ],
  '@ddd-kit/repository': [
    'AggregateRoot',
    'AbstractRepository',
    'MongooseRepository',
    'InMemoryRepository',
    'OptimisticLockError',
    'retryOnConflict',
    'RepositoryModule',
    'InjectRepository',
    'OnDataSync',
    'getRepositoryToken',
    'UniqueKey',
    'reconcileUniqueKeys',
  ],
};

/** Subpath entries: `/health` needs @nestjs/terminus (not a declared peer: docs/versions.md), which the workspace installs. */
const subpaths: Record<string, string[]> = {
  '@ddd-kit/prepare-key/health': ['PrepareKeyHealthIndicator'],
  '@ddd-kit/id-generator/health': ['MachineIdHealthIndicator'],
  '@ddd-kit/repository/health': ['RepositoryHealthIndicator', 'OutboxHealthIndicator'],
  '@ddd-kit/repository/outbox': ['OutboxRelay', 'InMemoryOutboxStore', 'PostgresOutboxStore', 'MongoOutboxStore'],
  '@ddd-kit/repository/reconciliation': ['ReadReplicaReconciler', 'InMemoryReadReplica', 'ReplicaEntryStatus'],
  '@ddd-kit/repository/http': ['DddKitExceptionFilter', 'dddKitHttpStatus'],
};

describe('built packages', () => {
  it.each(Object.entries(expected))('plain Node ESM imports %s with its public names', async (pkg, names) => {
    assertBuilt(`libs/${pkg.slice('@ddd-kit/'.length)}`);
    const script = `const m = await import(${JSON.stringify(pkg)}); console.log(JSON.stringify(Object.keys(m)));`;
    const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script], {
      cwd: root,
    }).catch((err) => {
      throw new Error(`importing ${pkg} from dist failed (run \`npm run build\` first):\n${err.stderr ?? err}`);
    });
    expect(JSON.parse(stdout)).toEqual(expect.arrayContaining(names));
  });

  it.each(Object.entries(subpaths))('plain Node ESM imports %s with its public names', async (entry, names) => {
    assertBuilt(`libs/${entry.split('/')[1]}`);
    const script = `const m = await import(${JSON.stringify(entry)}); console.log(JSON.stringify(Object.keys(m)));`;
    const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script], {
      cwd: root,
    }).catch((err) => {
      throw new Error(`importing ${entry} from dist failed (run \`npm run build\` first):\n${err.stderr ?? err}`);
    });
    expect(JSON.parse(stdout)).toEqual(expect.arrayContaining(names));
  });
});
