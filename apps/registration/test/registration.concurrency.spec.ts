import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { INestApplication } from '@nestjs/common';
import request from 'supertest';
import { CosIdGenerator } from '@ddd-kit/id-generator';
import { freePort } from '../../../test/support/server-provider.js';
import { mongoLabel } from '../../../test/support/servers.js';
import { AppProcess } from './support/app-process.js';
import {
  memoryOnly,
  postgresInProcess,
  redisAndPostgresInProcess,
  type Deployment,
  type Running,
} from './support/deployments.js';
import { waitFor } from '../../../test/support/wait.js';
import {
  backends,
  bearer,
  createTestApp,
  freshName,
  sharedBackend,
  sharedBackendEnv,
  viewOf,
} from './support/test-app.js';

const CALLERS = 50;

describe.each(backends)('concurrent registration of one name on $label', (backend) => {
  let app: INestApplication;

  beforeAll(async () => {
    app = await createTestApp(backend.config());
  });

  afterAll(async () => {
    await app?.close();
  });

  it(`${CALLERS} concurrent POST /users with one name: exactly one 201, the rest 409, one user stored`, async () => {
    const http = request(app.getHttpServer());
    const name = freshName('race');
    const responses = await Promise.all(
      Array.from({ length: CALLERS }, (_, i) =>
        http.post('/users').send({ username: i % 2 ? name : name.toUpperCase() }),
      ),
    );
    const statuses = responses.map((r) => r.status).sort();
    expect(statuses.filter((s) => s === 201)).toHaveLength(1);
    expect(statuses.filter((s) => s === 409)).toHaveLength(CALLERS - 1);
    const winner = viewOf(responses.find((r) => r.status === 201)!.body);
    await waitFor('the read model to show the winner', async () => {
      expect((await http.get('/users').query({ username: name }).expect(200)).body).toEqual([winner]);
      return true;
    });
    await http.get(`/users/${winner.id}`).expect(200, winner);
  });
});

// Two OS processes of the built app (`npm test` builds first) sharing Redis and the MongoDB-wire server.
describe(`two app instances sharing Redis and ${mongoLabel()}`, () => {
  const apps: AppProcess[] = [];
  const urls: string[] = [];

  beforeAll(async () => {
    const config = sharedBackend.config();
    for (let i = 0; i < 2; i++) {
      const port = await freePort();
      apps.push(new AppProcess({ PORT: String(port), ...sharedBackendEnv(config) }));
      urls.push(`http://127.0.0.1:${port}`);
    }
    await Promise.all(apps.map((app, i) => app.waitForHealth(urls[i])));
  }, 60_000);

  afterAll(async () => {
    await Promise.all(apps.map((app) => app.stop()));
  });

  it('the two instances lease different machine IDs, their user IDs carry them, and they serve one set of users', async () => {
    // The machine ID each instance leased, as it logged it at start-up.
    const leased = apps.map((app) => {
      const held = /Machine ID (\d+) of namespace "registration" held by instance/.exec(app.output);
      expect(held).not.toBeNull();
      return Number(held![1]);
    });
    expect(leased[0]).not.toBe(leased[1]);
    const [a, b] = await Promise.all(
      urls.map((url) =>
        request(url)
          .post('/users')
          .send({ username: freshName('inst') })
          .expect(201),
      ),
    );
    // A user ID is a CosId: its machine part is the machine ID of the instance that generated it.
    expect([a.body.id, b.body.id].map((id: string) => CosIdGenerator.parse(id).machineId)).toEqual(leased);
    await request(urls[1]).get(`/users/${a.body.id}`).expect(200, viewOf(a.body));
    await request(urls[0]).get(`/users/${b.body.id}`).expect(200, viewOf(b.body));
  });

  it(`${CALLERS} concurrent POST /users with one name across both: exactly one 201, one user stored`, async () => {
    const name = freshName('multi');
    const responses = await Promise.all(
      Array.from({ length: CALLERS }, (_, i) =>
        request(urls[i % 2])
          .post('/users')
          .send({ username: name }),
      ),
    );
    const created = responses.filter((r) => r.status === 201);
    expect(created).toHaveLength(1);
    expect(responses.filter((r) => r.status === 409)).toHaveLength(CALLERS - 1);
    for (const url of urls) {
      await waitFor('every instance to show the one registration', async () => {
        expect((await request(url).get('/users').query({ username: name }).expect(200)).body).toEqual([
          viewOf(created[0].body),
        ]);
        return true;
      });
    }
  });
});

// DELETE without If-Match states no precondition: a rename that commits between its read and its
// write must not fail it. Races a rename against an unconditional delete, many times over.
const RACES = 30;

describe.each<() => Deployment>([memoryOnly, postgresInProcess, redisAndPostgresInProcess])(
  'DELETE without If-Match racing renames',
  (deploy) => {
    const deployment = deploy();
    let url: string;
    let running: Running;

    beforeAll(async () => {
      running = await deployment.start({ instances: 1, proxied: false });
      url = running.urls[0];
    });
    afterAll(async () => {
      await running?.stop();
      await deployment.close();
    });

    it(`on ${deployment.label}: ${RACES} races, every delete 204 (never 412), every rename 200 or 404, no name left held`, async () => {
      const http = request(url);
      const deletes: number[] = [];
      const renames: number[] = [];
      const ids: string[] = [];
      for (let i = 0; i < RACES; i++) {
        const { body: user } = await http
          .post('/users')
          .send({ username: freshName('race') })
          .expect(201);
        ids.push(user.id);
        const [renamed, deleted] = await Promise.all([
          http
            .patch(`/users/${user.id}/username`)
            .set('Authorization', bearer(user))
            .set('If-Match', '"1"')
            .send({ username: freshName('race') }),
          http.delete(`/users/${user.id}`).set('Authorization', bearer(user)),
        ]);
        renames.push(renamed.status);
        deletes.push(deleted.status);
      }
      expect({
        deletes: deletes.filter((s) => s !== 204),
        renames: renames.filter((s) => s !== 200 && s !== 404),
      }).toEqual({
        deletes: [],
        renames: [],
      });
      const state = await deployment.inspect();
      expect(state.users.filter((u) => ids.includes(u.id))).toEqual([]);
      expect(state.reservations.filter((r) => ids.includes(r.userId))).toEqual([]);
    });
  },
);
