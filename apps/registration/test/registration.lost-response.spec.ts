import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { proxyUrl, type FaultProxy } from '../../../test/support/fault-proxy/index.js';
import {
  breaches,
  memoryOnly,
  postgresInProcess,
  redisAndPostgresInProcess,
  type Deployment,
  type Running,
} from './support/deployments.js';
import { rawRequest, type RawRequest, type RawResponse } from './support/raw-request.js';
import { freshName } from './support/test-app.js';

/**
 * A response lost on its way back (SPEC §4, "Repeated requests"): a fault proxy between the
 * HTTP clients and the app forwards each client's first request, lets the app act and answer in
 * full, and cuts the client's connection instead of passing the answer on. The client retries,
 * as HTTP client libraries do, with the same `Idempotency-Key`. Every client must end with its
 * own 201/200/204 — never a 409 for a name it holds itself, a 412 for a version it made, a 404
 * for a user it deleted — each name must be held by exactly one user, and the secret each
 * registration returned (to the retry) must authenticate that user's rename.
 *
 * The acceptance test of repeated requests in the sample: without Idempotency-Key support
 * every retried POST is a 409 for the client's own name (and a rename's retry a 412).
 */
const CLIENTS = 8;
/** A retry after a connection error; one is enough here, a few more cost nothing when the fault fires twice. */
const ATTEMPTS = 4;

// In this process, each on stores of its own (they open on start).
const deployments: Deployment[] = [memoryOnly(), postgresInProcess(), redisAndPostgresInProcess()];

/** What a client saw of one request: the answer to its last attempt, and how many attempts were cut. */
interface Outcome {
  response: RawResponse;
  lost: number;
}

describe.each(deployments)('responses lost after the app acted, on $label', (deployment) => {
  let running: Running;
  let proxy: FaultProxy;
  let url: string;

  beforeAll(async () => {
    running = await deployment.start({ instances: 1, proxied: false });
    ({ proxy, url } = await proxyUrl('http', running.urls[0]));
  }, 60_000);

  afterAll(async () => {
    await proxy?.close();
    await running?.stop();
    await deployment.close();
  });

  /**
   * One command with its own key; the proxy loses the answer to the first attempt (after the
   * app answered it), and the client retries with the same key while the connection fails.
   */
  async function withLostAnswer(req: RawRequest): Promise<Outcome> {
    const key = `"${randomUUID()}"`;
    const fault = proxy.dropReply({ match: (r) => r.headers?.['idempotency-key'] === key });
    const keyed = { ...req, headers: { ...req.headers, 'Idempotency-Key': key } };
    let lost = 0;
    for (let attempt = 1; ; attempt++) {
      try {
        const response = await rawRequest(url, keyed);
        // The fault must have hit this key's first attempt, or the test proves nothing.
        await fault.fired;
        return { response, lost };
      } catch (error) {
        lost++;
        if (attempt === ATTEMPTS) throw error;
      }
    }
  }

  it(`${CLIENTS} clients register, rename and delete, each first answer lost: every retry gets the client's own answer`, async () => {
    const clients = Array.from({ length: CLIENTS }, () => ({ name: freshName('lost'), renamed: freshName('lost') }));

    // Register: the retry returns the user the first attempt created, with a secret that works.
    const registered = await Promise.all(
      clients.map(({ name }) =>
        withLostAnswer({ method: 'POST', path: '/users', body: JSON.stringify({ username: name }) }),
      ),
    );
    expect(registered.map(({ response: r, lost }) => ({ lost, status: r.status, body: r.json }))).toEqual(
      clients.map(({ name }) => ({
        lost: 1,
        status: 201,
        body: { id: expect.any(String), username: name, version: 1, secret: expect.any(String) },
      })),
    );
    const users = registered.map(({ response }) => response.json as { id: string; secret: string });
    let state = await deployment.inspect();
    expect(breaches(state)).toEqual([]);
    expect(state.users.map((u) => u.id).sort()).toEqual(users.map((u) => u.id).sort());

    // Rename, authenticated with the secret the retried registration returned.
    const renamed = await Promise.all(
      clients.map(({ renamed }, i) =>
        withLostAnswer({
          method: 'PATCH',
          path: `/users/${users[i].id}/username`,
          headers: { Authorization: `Bearer ${users[i].secret}`, 'If-Match': '1' },
          body: JSON.stringify({ username: renamed }),
        }),
      ),
    );
    expect(renamed.map(({ response: r, lost }) => ({ lost, status: r.status, body: r.json }))).toEqual(
      clients.map(({ renamed }, i) => ({
        lost: 1,
        status: 200,
        body: { id: users[i].id, username: renamed, version: 2 },
      })),
    );
    state = await deployment.inspect();
    expect(breaches(state)).toEqual([]);
    expect(state.users.map((u) => u.username).sort()).toEqual(clients.map((c) => c.renamed).sort());

    // Delete: the retry is the 204 of the delete that happened, not a 404.
    const deleted = await Promise.all(
      users.map(({ id, secret }) =>
        withLostAnswer({ method: 'DELETE', path: `/users/${id}`, headers: { Authorization: `Bearer ${secret}` } }),
      ),
    );
    expect(deleted.map(({ response: r, lost }) => ({ lost, status: r.status }))).toEqual(
      clients.map(() => ({ lost: 1, status: 204 })),
    );
    state = await deployment.inspect();
    expect(breaches(state)).toEqual([]);
    expect(state.users).toEqual([]);
    expect(proxy.stats['drop-reply-cut']).toBe(3 * CLIENTS);
  });
});
