// Hostile input (SPEC §4): however deep its JSON or odd its path, a request gets a 4xx with a
// JSON message and changes nothing; no request text starts a line of the log. On memory,
// PostgreSQL and Redis + PostgreSQL, each app in this process so that its log can be read.
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, jest } from '@jest/globals';
import { getRepositoryToken, type IRepository } from '@ddd-kit/repository';
import { User } from '../src/users/user.aggregate.js';
import { captureOutput, type CapturedOutput } from './support/captured-output.js';
import {
  memoryOnly,
  postgresInProcess,
  redisAndPostgresInProcess,
  type Deployment,
  type Running,
} from './support/deployments.js';
import { rawRequest, type RawRequest, type RawResponse } from './support/raw-request.js';
import { freshName } from './support/test-app.js';

interface Registered {
  id: string;
  username: string;
  version: number;
  secret: string;
}

/** Request text that would forge a log line of its own if it were logged as it came. */
const FORGED = 'FORGED-LINE';
const forging = `x\n[Nest] 99999  - 01/01/2030, 00:00:00     LOG [Admin] ${FORGED}`;

/** `{"username": [[[…"abc"…]]]}`: the body at JSON depth `depth` (the object itself is level 1). */
const nestedBody = (depth: number) => `{"username":${'['.repeat(depth - 1)}"abc"${']'.repeat(depth - 1)}}`;

describe.each<() => Deployment>([memoryOnly, postgresInProcess, redisAndPostgresInProcess])(
  'hostile input',
  (deploy) => {
    const deployment = deploy();
    let running: Running;
    let url: string;
    let log: CapturedOutput;

    beforeAll(async () => {
      running = await deployment.start({ instances: 1, proxied: false });
      url = running.urls[0];
    });
    afterAll(async () => {
      await running?.stop();
      await deployment.close();
    });

    beforeEach(() => {
      log = captureOutput();
    });
    afterEach(() => {
      log.restore();
      jest.restoreAllMocks();
    });

    const send = (req: RawRequest) => rawRequest(url, req);
    const register = async (username = freshName('h')): Promise<Registered> => {
      const res = await send({ method: 'POST', path: '/users', body: JSON.stringify({ username }) });
      expect(res.status).toBe(201);
      return res.json as Registered;
    };
    const available = async (name: string) =>
      ((await send({ method: 'GET', path: `/usernames/${name}` })).json as { available: boolean }).available;
    const read = async (user: { id: string }) => (await send({ method: 'GET', path: `/users/${user.id}` })).json;
    const auth = (user: { secret: string }) => ({ authorization: `Bearer ${user.secret}` });
    /** A 4xx whose body is a JSON error with a message. */
    const refused = (res: RawResponse, status: number) => {
      expect({ status: res.status, json: res.json }).toEqual({
        status,
        json: expect.objectContaining({ statusCode: status, message: expect.anything() }),
      });
      expect(res.headers['content-type']).toMatch(/^application\/json/);
    };
    const nothingLogged = () => expect(log.text).toBe('');

    describe(`on ${deployment.label}`, () => {
      describe('bounded nesting', () => {
        it('refuses a body nested deeper than 32 levels with a 400 before validation, in any field, logging nothing', async () => {
          const name = freshName('deep');
          const bodies = [
            nestedBody(33),
            nestedBody(3_000),
            // 10 KB, under the 16 KB limit.
            nestedBody(5_000),
            `{"username":"${name}","extra":${'{"a":'.repeat(40)}1${'}'.repeat(40)}}`,
          ];
          for (const body of bodies) {
            const res = await send({ method: 'POST', path: '/users', body });
            refused(res, 400);
            expect(JSON.stringify(res.json)).toMatch(/nested deeper than 32/);
          }
          // At 32 levels the body is read, and validation refuses its content.
          const res = await send({ method: 'POST', path: '/users', body: nestedBody(32) });
          refused(res, 400);
          expect(JSON.stringify(res.json)).toMatch(/username (must be a string|is invalid)/);
          expect(await available(name)).toBe(true);
          nothingLogged();
        });

        it('refuses a deep body on PATCH and DELETE too (it is not read, let alone authenticated)', async () => {
          const user = await register();
          for (const method of ['PATCH', 'DELETE']) {
            const path = method === 'PATCH' ? `/users/${user.id}/username` : `/users/${user.id}`;
            refused(await send({ method, path, headers: { 'if-match': '"1"' }, body: nestedBody(3_000) }), 400);
            refused(
              await send({ method, path, headers: { 'if-match': '"1"', ...auth(user) }, body: nestedBody(3_000) }),
              400,
            );
          }
          expect(await read(user)).toEqual({ id: user.id, username: user.username, version: 1 });
          nothingLogged();
        });
      });

      describe('ids that cannot exist', () => {
        // What percent-decoding turns these into reaches `:id`.
        const impossible: Array<[string, string]> = [
          ['a NUL byte', 'a%00b'],
          ['a NUL byte in an ID-sized id', '0VcRBkd0000000%00'],
          ['LF', '0VcRBkd%0A0000000'],
          ['CR LF', 'x%0D%0Ay'],
          ['2,000 characters', 'z'.repeat(2_000)],
          ['a character outside Radix62', '0VcRBkd0000000!'],
          ['non-ASCII', '0VcRBkd000000%C3%A9'],
          ['astral characters', '%F0%9F%98%80'.repeat(8)],
          ['an encoded slash', '0VcRBkd%2F0000000'],
          ['14 characters', '0VcRBkd0000000'],
          ['16 characters', '0VcRBkd000000000'],
          ['a sequence past 16 bits', '0VcRBkd0000zzzz'],
        ];

        it.each(impossible)('GET /users/<%s>: 404 without asking the store, nothing logged', async (_label, id) => {
          const findById = jest.spyOn(
            running.app!.get<IRepository<string, User>>(getRepositoryToken(User)),
            'findById',
          );
          refused(await send({ method: 'GET', path: `/users/${id}` }), 404);
          expect(findById).not.toHaveBeenCalled();
          nothingLogged();
        });

        it.each(impossible)(
          "PATCH and DELETE /users/<%s> with a well-formed bearer that is no one's: 404, no store asked",
          async (_label, id) => {
            const findById = jest.spyOn(
              running.app!.get<IRepository<string, User>>(getRepositoryToken(User)),
              'findById',
            );
            const forged = { authorization: `Bearer ${Buffer.alloc(32, 7).toString('base64url')}` };
            const body = JSON.stringify({ username: freshName('never') });
            refused(
              await send({
                method: 'PATCH',
                path: `/users/${id}/username`,
                headers: { ...forged, 'if-match': '"1"' },
                body,
              }),
              404,
            );
            refused(await send({ method: 'DELETE', path: `/users/${id}`, headers: forged }), 404);
            expect(findById).not.toHaveBeenCalled();
            nothingLogged();
          },
        );

        it('a path that is not valid percent-encoding (a lone surrogate) is a 400, nothing logged', async () => {
          for (const method of ['GET', 'DELETE']) refused(await send({ method, path: '/users/%ED%A0%80' }), 400);
          nothingLogged();
        });
      });

      describe('log forging', () => {
        it('no request text starts a line of the log: an id with CR/LF and NUL, on every route', async () => {
          const id = encodeURIComponent(`${forging}\u0000`);
          const bearer = { authorization: `Bearer ${Buffer.alloc(32, 9).toString('base64url')}` };
          await send({ method: 'GET', path: `/users/${id}` });
          await send({
            method: 'PATCH',
            path: `/users/${id}/username`,
            headers: { ...bearer, 'if-match': '1' },
            body: '{}',
          });
          await send({ method: 'DELETE', path: `/users/${id}`, headers: bearer });
          await send({ method: 'GET', path: `/usernames/${id}` });
          await send({ method: 'GET', path: `/users?username=${id}` });
          expect(log.linesStartingWith(FORGED)).toEqual([]);
          expect(log.linesStartingWith('[Nest] 99999')).toEqual([]);
        });

        it("a store error that quotes request text (as drivers' messages do) is logged with it escaped", async () => {
          const repository = running.app!.get<IRepository<string, User>>(getRepositoryToken(User));
          const name = freshName('quoted');
          jest
            .spyOn(repository as unknown as { doInsert: () => Promise<void> }, 'doInsert')
            .mockRejectedValueOnce(new Error(`injected: refused the value '${forging}'\r${FORGED} again`));
          const res = await send({ method: 'POST', path: '/users', body: JSON.stringify({ username: name }) });
          refused(res, 503);
          // The operator still learns what failed, on one line.
          expect(log.text).toContain('injected: refused the value');
          expect(log.linesStartingWith(FORGED)).toEqual([]);
          expect(log.linesStartingWith('[Nest] 99999')).toEqual([]);
          expect(JSON.stringify(res.json)).not.toContain(FORGED);
        });
      });

      describe('unknown fields, whatever their name', () => {
        const names = ['__proto__', 'constructor', 'prototype', 'hasOwnProperty', 'toString', 'valueOf'];

        it.each(names)('POST /users with "%s": 400, the name stays free', async (field) => {
          const name = freshName('proto');
          const body = `{"username":"${name}","${field}":{"admin":true}}`;
          const res = await send({ method: 'POST', path: '/users', body });
          refused(res, 400);
          expect(JSON.stringify(res.json)).toContain(field);
          expect(await available(name)).toBe(true);
        });

        it.each(names)('PATCH /users/:id/username with "%s": 400, the user unchanged', async (field) => {
          const user = await register();
          const newName = freshName('proto');
          const body = `{"${field}":1,"username":"${newName}"}`;
          refused(
            await send({
              method: 'PATCH',
              path: `/users/${user.id}/username`,
              headers: { ...auth(user), 'if-match': '"1"' },
              body,
            }),
            400,
          );
          expect(await read(user)).toEqual({ id: user.id, username: user.username, version: 1 });
          expect(await available(newName)).toBe(true);
        });

        it.each(names)('GET /users?username=…&%s=…: 400', async (field) => {
          refused(await send({ method: 'GET', path: `/users?username=abc&${field}=x` }), 400);
        });
      });

      describe('headers and secrets', () => {
        it('the 201 that carries the secret says Cache-Control: no-store', async () => {
          const res = await send({
            method: 'POST',
            path: '/users',
            body: JSON.stringify({ username: freshName('ns') }),
          });
          expect(res.status).toBe(201);
          expect(res.headers['cache-control']).toBe('no-store');
        });

        it('no response says X-Powered-By', async () => {
          const user = await register();
          const responses = [
            await send({ method: 'POST', path: '/users', body: JSON.stringify({ username: freshName('xp') }) }),
            await send({ method: 'GET', path: `/users/${user.id}` }),
            await send({ method: 'GET', path: '/users/nope' }),
            await send({ method: 'POST', path: '/users', body: '{"username":' }),
            await send({ method: 'GET', path: '/nowhere' }),
            await send({ method: 'GET', path: '/health' }),
            await send({ method: 'GET', path: '/docs-json' }),
          ];
          for (const res of responses) expect(res.headers['x-powered-by']).toBeUndefined();
        });

        it('PATCH and DELETE check authentication before the body, the id and If-Match', async () => {
          const user = await register();
          const patch = (headers: Record<string, string | string[]>, body: string, id = user.id) =>
            send({ method: 'PATCH', path: `/users/${id}/username`, headers, body });
          const name = JSON.stringify({ username: freshName('auth') });
          for (const [headers, body] of [
            [{ 'if-match': '"1"' }, '{"username":"x"}'],
            [{ 'if-match': '"1"' }, '{"__proto__":{},"username":"abcd"}'],
            [{ 'if-match': '"1"' }, '{"username":"abcd","admin":true}'],
            [{}, name],
            [{ 'if-match': '' }, name],
            [{ 'if-match': 'yesterday' }, name],
            [{ 'if-match': ['"1"', '"2"'] }, name],
          ] as Array<[Record<string, string | string[]>, string]>) {
            const res = await patch(headers, body);
            refused(res, 401);
            expect(res.headers['www-authenticate']).toBe('Bearer realm="registration"');
          }
          refused(await patch({ 'if-match': '"1"' }, name, 'a%00b'), 401);
          for (const headers of [{}, { 'if-match': '' }, { 'if-match': 'yesterday' }] as Array<Record<string, string>>)
            refused(await send({ method: 'DELETE', path: `/users/${user.id}`, headers }), 401);
          refused(await send({ method: 'DELETE', path: '/users/a%00b' }), 401);
          expect(await read(user)).toEqual({ id: user.id, username: user.username, version: 1 });
        });

        it('two Authorization headers are refused (401), even when both are the right one', async () => {
          const user = await register();
          const newName = freshName('twice');
          const other = await register();
          for (const authorization of [
            [auth(user).authorization, auth(user).authorization],
            [auth(user).authorization, auth(other).authorization],
            [auth(other).authorization, auth(user).authorization],
          ]) {
            const res = await send({
              method: 'PATCH',
              path: `/users/${user.id}/username`,
              headers: { authorization, 'if-match': '"1"' },
              body: JSON.stringify({ username: newName }),
            });
            refused(res, 401);
            expect(res.headers['www-authenticate']).toBe('Bearer realm="registration", error="invalid_request"');
            refused(await send({ method: 'DELETE', path: `/users/${user.id}`, headers: { authorization } }), 401);
          }
          expect(await read(user)).toEqual({ id: user.id, username: user.username, version: 1 });
          expect(await available(newName)).toBe(true);
        });

        it('an empty or repeated If-Match is malformed (400) on PATCH and on DELETE alike', async () => {
          const user = await register();
          const newName = freshName('im');
          for (const ifMatch of ['', '  ', ['"1"', '"1"'], ['1', '2']]) {
            refused(
              await send({
                method: 'PATCH',
                path: `/users/${user.id}/username`,
                headers: { ...auth(user), 'if-match': ifMatch },
                body: JSON.stringify({ username: newName }),
              }),
              400,
            );
            refused(
              await send({
                method: 'DELETE',
                path: `/users/${user.id}`,
                headers: { ...auth(user), 'if-match': ifMatch },
              }),
              400,
            );
          }
          expect(await read(user)).toEqual({ id: user.id, username: user.username, version: 1 });
          expect(await available(newName)).toBe(true);
        });
      });

      describe('usernames are a-z, 0-9, "_", "." and "-" before folding', () => {
        // Each folds to an ASCII name: the Kelvin sign by toLowerCase alone, the others by NFKC.
        const lookalikes: Array<[string, string]> = [
          ['the Kelvin sign (U+212A)', `\u212A${freshName('elvin')}`],
          ['fullwidth letters', '\uFF41\uFF44\uFF4D\uFF49\uFF4E'],
          ['a ligature (U+FB01)', '\uFB01nance'],
        ];

        it.each(lookalikes)('%s: 400 on POST, PATCH and the lookups, nothing reserved', async (_label, name) => {
          const ascii = name.normalize('NFKC').toLowerCase();
          expect(ascii).toMatch(/^[a-z0-9_.-]+$/);
          refused(await send({ method: 'POST', path: '/users', body: JSON.stringify({ username: name }) }), 400);
          const user = await register();
          refused(
            await send({
              method: 'PATCH',
              path: `/users/${user.id}/username`,
              headers: { ...auth(user), 'if-match': '"1"' },
              body: JSON.stringify({ username: name }),
            }),
            400,
          );
          refused(await send({ method: 'GET', path: `/usernames/${encodeURIComponent(name)}` }), 400);
          refused(await send({ method: 'GET', path: `/users?username=${encodeURIComponent(name)}` }), 400);
          expect(await available(ascii)).toBe(true);
          expect(await read(user)).toEqual({ id: user.id, username: user.username, version: 1 });
        });

        it('ASCII capitals still fold: "KELVIN" is registered as "kelvin"', async () => {
          const name = `K${freshName('elvin')}`;
          const user = await register(name.toUpperCase());
          expect(user.username).toBe(name.toLowerCase());
        });
      });
    });
  },
);
