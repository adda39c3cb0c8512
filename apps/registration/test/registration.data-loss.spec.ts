import { Agent } from 'node:http';
import { describe, expect, it } from '@jest/globals';
import { MongoClient } from 'mongodb';
import { freePort, startRedisServer } from '../../../test/support/server-provider.js';
import { dropMongoDatabase, mongoLabel, mongoUri, uniqueName } from '../../../test/support/servers.js';
import { waitFor } from '../../../test/support/wait.js';
import { AppProcess } from './support/app-process.js';
import { register, type Outcome } from './support/registrations.js';

/**
 * SPEC §4: a reservation store that lost its data is recognised. Two instances of the built app
 * keep their reservations on a Redis of the test's own (no persistence) and their users on
 * MongoDB; several clients register over a small set of names while Redis is killed and started
 * again empty. Registrations get 503 until the instances have restored every user's reservation
 * from the users, with no command run by hand; at the end no two users share a name, and a name
 * taken before the loss is a 409.
 */
describe(`data loss: Redis restarted empty under registration load (users on ${mongoLabel()})`, () => {
  it('no username is held by two users, and a name taken before the loss is refused afterwards', async () => {
    const redis = await startRedisServer();
    const name = uniqueName('wiped');
    const mongodbUri = `${mongoUri().replace(/\/+$/, '')}/${name}`;
    const urls: string[] = [];
    const apps: AppProcess[] = [];
    const outcomes: Array<Outcome & { afterLoss: boolean }> = [];
    let afterLoss = false;
    let stopped = false;
    const clients: Array<Promise<void>> = [];
    try {
      for (let i = 0; i < 2; i++) {
        const port = await freePort();
        urls.push(`http://127.0.0.1:${port}`);
        apps.push(
          new AppProcess({
            PORT: String(port),
            PREPARE_BACKEND: 'redis',
            REPOSITORY_BACKEND: 'mongo',
            REDIS_URL: redis.url,
            MONGODB_URI: mongodbUri,
            MACHINE_ID: String(i + 1),
            PREPARE_KEY_PREFIX: `${name}:prepare`,
          }),
        );
      }
      await Promise.all(apps.map((app, i) => app.waitForHealth(urls[i])));

      // Six clients, each on keep-alive connections of its own, over twelve names and both instances.
      const names = Array.from({ length: 12 }, (_, i) => `${name.slice(-8)}n${i}`.toLowerCase());
      for (let c = 0; c < 6; c++) {
        clients.push(
          (async () => {
            const agent = new Agent({ keepAlive: true, maxSockets: 1 });
            try {
              for (let n = c; !stopped; n++) {
                const loss = afterLoss;
                const outcome = await register(urls[n % urls.length], agent, names[(n * 7 + c) % names.length]);
                outcomes.push({ ...outcome, afterLoss: loss });
              }
            } finally {
              agent.destroy();
            }
          })(),
        );
      }

      const taken = await waitFor('a few registrations before the loss', () => {
        const won = outcomes.filter((o) => o.status === 201);
        return won.length >= 4 && won;
      });
      await redis.kill();
      await redis.start(); // empty: no persistence
      afterLoss = true;

      // While the store is refilled, availability is a 503 too, never a guess from the empty store.
      const lookup = await fetch(`${urls[0]}/usernames/${taken[0].name}`);
      expect([200, 503]).toContain(lookup.status);
      if (lookup.status === 200) expect(await lookup.json()).toMatchObject({ available: false });

      // Served again once restored; every name taken before is a 409 from then on.
      const before = taken.map((o) => o.name);
      await waitFor('a registration after the loss to be answered 201 or 409', () =>
        outcomes.some((o) => o.afterLoss && (o.status === 201 || o.status === 409)),
      );
      const agent = new Agent({ keepAlive: true });
      try {
        for (const url of urls) {
          for (const taken of new Set(before)) {
            const again = await waitFor(`POST ${taken} on ${url} to be answered other than 503`, async () => {
              const outcome = await register(url, agent, taken);
              return outcome.status !== 503 && outcome.status !== undefined && outcome;
            });
            expect({ name: taken, status: again.status }).toEqual({ name: taken, status: 409 });
          }
        }
      } finally {
        agent.destroy();
      }
    } finally {
      stopped = true;
      await Promise.all(clients);
      await Promise.all(apps.map((app) => app.stop()));
      await redis.stop();
    }

    const statuses = outcomes.map((o) => `${o.afterLoss ? 'after' : 'before'} ${o.status ?? o.error}`);
    process.stdout.write(
      `\n[data loss]\n${JSON.stringify(
        statuses.reduce<Record<string, number>>((count, s) => ({ ...count, [s]: (count[s] ?? 0) + 1 }), {}),
      )}\n`,
    );
    // Never a 5xx other than 503 (the store being restored), and never two users with one name.
    expect(outcomes.filter((o) => o.status !== undefined && o.status >= 500 && o.status !== 503)).toEqual([]);
    const mongo = await new MongoClient(mongodbUri).connect();
    try {
      const users = await mongo
        .db()
        .collection('user')
        .find({ _deleted: { $ne: true } })
        .toArray();
      const byName = new Map<string, string[]>();
      for (const user of users)
        byName.set(String(user.username), [...(byName.get(String(user.username)) ?? []), String(user._id)]);
      expect([...byName].filter(([, ids]) => ids.length > 1)).toEqual([]);
      expect(byName.size).toBeGreaterThan(0);
      await dropMongoDatabase(mongo.db());
    } finally {
      await mongo.close();
    }
  }, 180_000);
});
