import { afterAll, describe, expect, it } from '@jest/globals';
import { RedisMachineIdDistributor } from '@ddd-kit/id-generator';
import { Redis } from 'ioredis';
import { redisUrl } from '../../../test/support/servers.js';
import { AppProcess } from './support/app-process.js';
import { sharedBackend, sharedBackendEnv } from './support/test-app.js';

describe('registration start-up and shutdown', () => {
  const redis = new Redis(redisUrl());
  afterAll(() => redis.quit());

  it.each([
    [{ PREPARE_BACKEND: 'etcd' }, 'PREPARE_BACKEND'],
    [{ PREPARE_BACKEND: 'redis', REDIS_URL: '' }, 'REDIS_URL'],
    [{ REPOSITORY_BACKEND: 'mongo', MONGODB_URI: '', MACHINE_ID: '1' }, 'MONGODB_URI'],
    [{ REPOSITORY_BACKEND: 'mongo', MONGODB_URI: 'mongodb://127.0.0.1:1/x' }, 'MACHINE_ID'],
    [{ MACHINE_ID: 'many' }, 'MACHINE_ID'],
  ])('refuses to start with %j, naming %s', async (env, variable) => {
    const app = new AppProcess({ PORT: '0', REDIS_URL: '', MONGODB_URI: '', ...env });
    expect((await app.exited).code).toBe(1);
    expect(app.output).toContain(`Invalid configuration: ${variable}`);
  });

  it('shuts down gracefully on SIGTERM: runs its shutdown hooks, releases its machine ID, closes its connections', async () => {
    const config = sharedBackend.config();
    const app = new AppProcess({ PORT: '0', ...sharedBackendEnv(config) });
    await app.waitFor('listening', () => app.output.includes('listening on'));
    const exit = await app.stop();
    // Nest re-raises the signal once its shutdown hooks have run; it is not a crash (no SIGKILL, no error code).
    expect(exit.code === 0 || exit.signal === 'SIGTERM').toBe(true);
    const held = /Machine ID (\d+) of namespace "registration" held by instance "([^"]+)"/.exec(app.output);
    expect(held).not.toBeNull();
    expect(app.output).toContain('connections closed');
    const [, machineId, instance] = held!;
    expect(app.output).toContain(
      `Machine ID ${machineId} of namespace "registration" released by instance "${instance}"`,
    );
    const keys = new RedisMachineIdDistributor(redis).keys('registration');
    // Released: not held by this instance any more, and listed among the released IDs for the next
    // instance to reuse, unless one already has (apps of other suites share this namespace).
    const owner = await redis.hget(keys.owners, machineId);
    expect(owner).not.toBe(instance);
    expect(await redis.hget(keys.instances, instance)).toBeNull();
    if (owner === null) expect(await redis.zscore(keys.released, machineId)).not.toBeNull();
  });
});
