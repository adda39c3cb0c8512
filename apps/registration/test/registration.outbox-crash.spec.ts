import { afterAll, describe, expect, it } from '@jest/globals';
import { freePort } from '../../../test/support/server-provider.js';
import { mongoLabel, mongoUri, postgresSchema, uniqueName } from '../../../test/support/servers.js';
import { AppProcess } from './support/app-process.js';
import { waitFor } from '../../../test/support/wait.js';
import { freshName } from './support/test-app.js';

/**
 * The read model of a shared repository is fed from the outbox, so an event outlives the process
 * that wrote it. The relay is parked by its test seam (OUTBOX_TEST_PARK=after-claim, the outbox's onClaimed option)
 * right after it claimed the registration's event and before any handler ran; the process is
 * then killed with SIGKILL. A new process, with no reconciliation, delivers the event once the
 * dead relay's lease has run out, and the read model converges.
 */
interface Setup {
  label: string;
  env: () => Promise<{ env: Record<string, string>; cleanup: () => Promise<void> }>;
}

const setups: Setup[] = [
  {
    label: 'PostgreSQL',
    env: async () => {
      const schema = await postgresSchema('outbox_crash');
      return {
        env: {
          PREPARE_BACKEND: 'postgres',
          REPOSITORY_BACKEND: 'postgres',
          MACHINE_ID: 'postgres',
          DATABASE_URL: schema.url,
        },
        cleanup: () => schema.drop(),
      };
    },
  },
  {
    label: mongoLabel(),
    env: async () => ({
      env: {
        PREPARE_BACKEND: 'mongo',
        REPOSITORY_BACKEND: 'mongo',
        MACHINE_ID: '11',
        MONGODB_URI: `${mongoUri().replace(/\/+$/, '')}/${uniqueName('outbox_crash')}`,
      },
      // The emulator drops nothing; its databases go with the test servers.
      cleanup: async () => undefined,
    }),
  },
];

describe.each(setups)('the read model after a SIGKILL between the write and its handler, on $label', (setup) => {
  const apps: AppProcess[] = [];
  let cleanup: (() => Promise<void>) | undefined;

  afterAll(async () => {
    await Promise.all(apps.map((app) => app.stop()));
    await cleanup?.();
  });

  it('receives the registration after a restart, without reconciliation', async () => {
    const prepared = await setup.env();
    cleanup = prepared.cleanup;
    const url = `http://127.0.0.1:${await freePort()}`;
    const env = { ...prepared.env, PORT: new URL(url).port };
    const byName = async (name: string) => (await fetch(`${url}/users?username=${name}`)).json();

    const parked = new AppProcess({ ...env, OUTBOX_TEST_PARK: 'after-claim' });
    apps.push(parked);
    await parked.waitForHealth(url);
    const name = freshName('crash');
    const response = await fetch(`${url}/users`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: name }),
    });
    expect(response.status).toBe(201);
    const { secret: _secret, ...user } = (await response.json()) as {
      id: string;
      username: string;
      version: number;
      secret: string;
    };

    // The write committed (the user is there), its event is claimed, and no handler ran.
    await parked.waitFor('the relay parked after its claim', () =>
      parked.output.includes('outbox-relay parked after claiming'),
    );
    expect(await (await fetch(`${url}/users/${user.id}`)).json()).toEqual(user);
    expect(await byName(name)).toEqual([]);
    expect((await parked.kill()).signal).toBe('SIGKILL');

    const restarted = new AppProcess(env);
    apps.push(restarted);
    await restarted.waitForHealth(url);
    // Delivered once the dead relay's claim expired: the bound is far above the sample's lease.
    await waitFor(
      'the read model to show the user once the outbox delivered',
      async () => {
        expect(await byName(name)).toEqual([user]);
        return true;
      },
      { timeoutMs: 120_000 },
    );
  }, 240_000);
});
