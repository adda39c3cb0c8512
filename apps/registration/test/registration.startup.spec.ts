import { afterAll, describe, expect, it } from '@jest/globals';
import { RedisMachineIdDistributor } from '@ddd-kit/id-generator';
import { Redis } from 'ioredis';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { redisUrl } from '../../../test/support/servers.js';
import { sharedBackend, sharedBackendEnv } from './support/test-app.js';

// The built entry point as an operator runs it (`npm run build` first; CI does).
const main = join(dirname(fileURLToPath(import.meta.url)), '..', 'dist', 'main.js');

interface Run {
  code: number | null;
  signal: NodeJS.Signals | null;
  output: string;
}

/** Starts the app; `until` sees its output and may stop it (SIGTERM) by returning true. */
function runApp(env: Record<string, string | undefined>, until: (output: string) => boolean = () => false): Promise<Run> {
  if (!existsSync(main)) throw new Error(`${main} is missing: run \`npm run build\` before \`npm test\``);
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [main], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    let stopping = false;
    const onData = (d: Buffer) => {
      output += d;
      if (!stopping && until(output)) {
        stopping = true;
        child.kill('SIGTERM');
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    const timer = setTimeout(() => child.kill('SIGKILL'), 45_000);
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, output });
    });
  });
}

describe('registration start-up and shutdown', () => {
  const redis = new Redis(redisUrl());
  afterAll(() => redis.quit());

  it.each([
    [{ PREPARE_BACKEND: 'etcd' }, 'PREPARE_BACKEND'],
    [{ PREPARE_BACKEND: 'redis', REDIS_URL: '' }, 'REDIS_URL'],
    [{ REPOSITORY_BACKEND: 'mongo', MONGODB_URI: '' }, 'MONGODB_URI'],
    [{ MACHINE_ID: 'many' }, 'MACHINE_ID'],
  ])('refuses to start with %j, naming %s', async (env, variable) => {
    const run = await runApp({ PORT: '0', REDIS_URL: '', MONGODB_URI: '', ...env });
    expect(run.code).toBe(1);
    expect(run.output).toContain(`Invalid configuration: ${variable}`);
  });

  it('shuts down gracefully on SIGTERM: runs its shutdown hooks, releases its machine ID, closes its connections', async () => {
    const config = sharedBackend.config();
    const run = await runApp(
      { PORT: '0', ...sharedBackendEnv(config) },
      (output) => output.includes('listening on'),
    );
    // Nest re-raises the signal once its shutdown hooks have run; it is not a crash (no SIGKILL, no error code).
    expect(run.code === 0 || run.signal === 'SIGTERM').toBe(true);
    const held = /Machine ID (\d+) of namespace "registration" held by instance "([^"]+)"/.exec(run.output);
    expect(held).not.toBeNull();
    expect(run.output).toContain('connections closed');
    const keys = new RedisMachineIdDistributor(redis).keys('registration');
    // Released: no owner, and listed among the released IDs for the next instance to reuse.
    expect(await redis.hget(keys.owners, held![1])).toBeNull();
    expect(await redis.hget(keys.instances, held![2])).toBeNull();
    expect(await redis.zscore(keys.released, held![1])).not.toBeNull();
  });
});
