import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { PreparedValue, reconcileReservations, TTL_FOREVER } from '@ddd-kit/prepare-key';
import { uniqueName } from '../support/servers.js';
import { waitFor } from '../support/wait.js';
import { assertBuiltLib } from './support/built-lib.js';
import { LABELLED_BACKENDS, openBackend } from './support/shared-backends.js';
import { killRunningWorkers, WorkerProcess } from './support/worker-process.js';

type UsernameIndex = { userId: string };

/**
 * The new key's first reservation: long enough that the checks made while it is held (an IPC
 * message and four round trips after the worker took it) finish inside it on a machine loaded
 * many times over (2 s was missed there), short enough to watch it lapse.
 */
const NEW_KEY_TTL_MS = 10_000;

beforeAll(() => {
  assertBuiltLib();
});

afterAll(async () => {
  await killRunningWorkers();
});

/**
 * A worker runs reprepare(oldKey, value, newKey, newValue) and is SIGKILLed after it took
 * newKey and before it released oldKey. Resolves once the worker is dead.
 */
async function killBetweenTheTwoSteps(args: {
  backend: string;
  scope: string;
  name: string;
  oldKey: string;
  newKey: string;
  value: UsernameIndex;
  ttlMs: number | null;
  whileStopped: () => Promise<void>;
}): Promise<number | null> {
  const { whileStopped, ...workerArgs } = args;
  const worker = new WorkerProcess('crash.worker.mjs', workerArgs);
  const { ttlAt } = await worker.message<{ type: string; ttlAt: number | null }>('between');
  await whileStopped();
  worker.kill('SIGKILL');
  expect(await worker.exited).toEqual({ code: null, signal: 'SIGKILL' });
  return ttlAt;
}

describe.each(LABELLED_BACKENDS)('a process killed in the middle of a key change, on %s', (_label, backend) => {
  let scope: string;
  let opened: Awaited<ReturnType<typeof openBackend>>;

  beforeAll(async () => {
    scope = uniqueName(`crash_${backend}`);
    opened = await openBackend(backend, scope);
  });

  afterAll(async () => {
    await opened?.close();
  });

  // The two cases (each on a key space and a worker of its own) start their workers at once.
  it.concurrent('leaves both keys held; a TTL on the new key frees it, and the old key stays intact', async () => {
    const name = 'username';
    const pk = opened.factory.create<UsernameIndex>(name);
    const value = { userId: 'u-1' };
    expect(await pk.prepare('alice', value)).toBe(true);

    const ttlAt = await killBetweenTheTwoSteps({
      backend,
      scope,
      name,
      oldKey: 'alice',
      newKey: 'alicia',
      value,
      ttlMs: NEW_KEY_TTL_MS,
      whileStopped: async () => {
        // The worker has taken the new key and not yet released the old one: nobody else can
        // take either (checked here, well inside the new key's TTL).
        expect(await pk.get('alicia')).toEqual(value);
        expect(await pk.get('alice')).toEqual(value);
        expect(await pk.prepare('alicia', { userId: 'u-2' })).toBe(false);
        expect(await pk.prepare('alice', { userId: 'u-2' })).toBe(false);
      },
    });

    // The second step never ran: both records are as the dead worker left them.
    expect(await pk.getValue('alice')).toEqual(new PreparedValue(value, TTL_FOREVER));
    expect(await pk.getValue('alicia')).toEqual(new PreparedValue(value, ttlAt!));
    expect(await pk.prepare('alice', { userId: 'u-2' })).toBe(false);

    // The new key's TTL frees it (at ttlAt by the store's clock, which only real time moves);
    // the old key, still the user's name, is untouched.
    await waitFor('the TTL to free the new key', async () => (await pk.get('alicia')) === undefined);
    expect(await pk.prepare('alicia', { userId: 'u-2' })).toBe(true);
    expect(await pk.getValue('alice')).toEqual(new PreparedValue(value, TTL_FOREVER));
  });

  it.concurrent('with a forever new key, reconciliation against the write model releases the orphan', async () => {
    const name = 'handle';
    const pk = opened.factory.create<UsernameIndex>(name);
    const value = { userId: 'u-7' };
    expect(await pk.prepare('bob', value)).toBe(true);

    await killBetweenTheTwoSteps({
      backend,
      scope,
      name,
      oldKey: 'bob',
      newKey: 'bobby',
      value,
      ttlMs: null,
      whileStopped: async () => expect(await pk.get('bobby')).toEqual(value),
    });
    expect(await pk.get('bob')).toEqual(value);
    expect(await pk.get('bobby')).toEqual(value);

    // The aggregate was never changed (the process died before committing): its name is 'bob'.
    const usernameOf = new Map([['u-7', 'bob']]);
    const report = await reconcileReservations(pk, (key, owner) => usernameOf.get(owner.userId) === key);
    expect(report).toEqual({ scanned: 2, expired: 0, live: 1, released: 1, skipped: 0, failed: 0 });
    expect(await pk.getValue('bobby')).toBeUndefined();
    expect(await pk.getValue('bob')).toEqual(new PreparedValue(value, TTL_FOREVER));
  });
});
