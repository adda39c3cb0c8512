// The HTTP surface under fuzzing (SPEC §4, "Hostile input"): random bodies, headers and paths,
// mixed with the real IDs and secrets of a few users so that requests get past authentication.
// Whatever comes, the app never answers 5xx, always answers JSON with a message, writes only
// what a successful request says it wrote (the stores are compared with a model after every
// request), and no request text starts a line of its log. A fixed seed and a bounded number of
// runs, so CI replays the same requests: FUZZ_SEED and FUZZ_RUNS explore others.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { captureOutput } from './support/captured-output.js';
import {
  memoryOnly,
  postgresInProcess,
  redisAndPostgresInProcess,
  type Deployment,
  type Running,
} from './support/deployments.js';
import { rawRequest, type RawRequest, type RawResponse } from './support/raw-request.js';
import { freshName } from './support/test-app.js';

const SEED = Number(process.env.FUZZ_SEED ?? 20_210_021);
const RUNS = Number(process.env.FUZZ_RUNS ?? 400);

/** Request text that would forge a line of the log if it were logged as it came. */
const MARKER = 'FUZZ-FORGED';

interface User {
  id: string;
  username: string;
  secret: string;
}

/** Percent-encodes every UTF-16 unit; a lone surrogate becomes bytes that are not UTF-8 at all. */
function percentEncode(text: string): string {
  let out = '';
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    const next = text.charCodeAt(i + 1);
    if (code >= 0xd800 && code <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
      out += encodeURIComponent(text.slice(i, i + 2));
      i++;
    } else if (code >= 0xd800 && code <= 0xdfff) out += '%ED%A0%80';
    else out += encodeURIComponent(text[i]);
  }
  return out;
}

const routes = ['users', 'user', 'rename', 'usernames', 'search', 'other'] as const;

/** What a request of the fuzz is made of, before it is tied to the users of the run. */
interface Shape {
  target: readonly [method: string, route: (typeof routes)[number]];
  id: { user: number } | { text: string };
  text: string;
  auth: 'none' | 'own' | 'other' | 'forged' | 'twice' | { text: string };
  ifMatch: undefined | string | string[];
  contentType: string | undefined;
  body: string | undefined;
}

const hostileText = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.string({ unit: 'grapheme', maxLength: 20 }),
  // Line breaks of every kind, each followed by the marker: the log-forging attempt.
  fc
    .tuple(
      fc.string({ maxLength: 8 }),
      fc.constantFrom('\n', '\r', '\r\n', '\u2028', '\u2029', '\u0085', '\v', '\f', '\x1b[2K\r', '\u0000\n'),
      fc.string({ maxLength: 8 }),
    )
    .map(([head, lineBreak, tail]) => `${head}${lineBreak}${MARKER}${tail}`),
  fc.constantFrom('\u212Aelvin', 'ALICE', '..', '%00', 'a\u0000b', '0VcRBkd00000000', '{"$ne":null}', 'z'.repeat(300)),
);

/** A username the rule accepts, most of the time; something else the rest. */
const username = fc.oneof(
  { weight: 3, arbitrary: fc.stringMatching(/^[a-zA-Z0-9][a-zA-Z0-9_.-]{2,12}$/) },
  { weight: 1, arbitrary: hostileText },
);

const jsonBody = fc.oneof(
  { weight: 8, arbitrary: username.map((name) => JSON.stringify({ username: name })) },
  fc
    .tuple(
      username,
      fc.constantFrom('__proto__', 'constructor', 'prototype', 'toString', 'admin', 'username '),
      fc.jsonValue({ maxDepth: 3 }),
    )
    .map(
      ([name, key, value]) => `{"username":${JSON.stringify(name)},${JSON.stringify(key)}:${JSON.stringify(value)}}`,
    ),
  fc.jsonValue({ maxDepth: 4 }).map((value) => JSON.stringify(value)),
  fc.integer({ min: 20, max: 6_000 }).map((depth) => `{"username":${'['.repeat(depth)}1${']'.repeat(depth)}}`),
  fc.integer({ min: 20, max: 3_000 }).map((depth) => `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`),
  hostileText,
  fc.constant('{"username":"abc"'),
  fc.integer({ min: 16_000, max: 40_000 }).map((size) => JSON.stringify({ username: 'x'.repeat(size) })),
);

/** Header values node:http can send (no CR, LF or NUL): anything else is refused before it leaves. */
const headerText = fc
  .string({ unit: 'binary', maxLength: 60 })
  .map((text) => text.replace(/[^\t\x20-\x7e\x80-\xff]/g, '').trim());

const shape: fc.Arbitrary<Shape> = fc.record({
  // Mostly the requests the API serves, sometimes anything on anything.
  target: fc.oneof(
    { weight: 3, arbitrary: fc.constant(['POST', 'users'] as const) },
    { weight: 3, arbitrary: fc.constant(['PATCH', 'rename'] as const) },
    { weight: 3, arbitrary: fc.constant(['DELETE', 'user'] as const) },
    { weight: 2, arbitrary: fc.constant(['GET', 'user'] as const) },
    { weight: 1, arbitrary: fc.constant(['GET', 'usernames'] as const) },
    { weight: 1, arbitrary: fc.constant(['GET', 'search'] as const) },
    {
      weight: 2,
      arbitrary: fc.tuple(
        fc.constantFrom('GET', 'POST', 'PATCH', 'DELETE', 'PUT', 'OPTIONS', 'HEAD'),
        fc.constantFrom(...routes),
      ),
    },
  ),
  id: fc.oneof(
    { weight: 3, arbitrary: fc.integer({ min: 0, max: 2 }).map((user) => ({ user })) },
    { weight: 1, arbitrary: hostileText.map((text) => ({ text })) },
  ),
  text: hostileText,
  auth: fc.oneof(
    { weight: 4, arbitrary: fc.constant('own' as const) },
    { weight: 3, arbitrary: fc.constantFrom('none', 'other', 'forged', 'twice') },
    { weight: 1, arbitrary: headerText.map((text) => ({ text })) },
  ),
  ifMatch: fc.oneof(
    { weight: 3, arbitrary: fc.constant(undefined) },
    { weight: 3, arbitrary: fc.constantFrom('1', '"1"', 'W/"1"', '"2"') },
    { weight: 2, arbitrary: fc.constantFrom('', ' ', '*', '"1", "2"', ['"1"', '"1"']) },
    { weight: 1, arbitrary: headerText },
  ),
  contentType: fc.constantFrom(
    'application/json',
    'application/json',
    'application/json',
    'application/json',
    'application/json; charset=utf-8',
    'application/json; charset=latin1',
    'text/plain',
    undefined,
  ),
  body: fc.option(jsonBody, { nil: undefined }),
}) as fc.Arbitrary<Shape>;

describe.each<() => Deployment>([memoryOnly, postgresInProcess, redisAndPostgresInProcess])(
  'the HTTP surface, fuzzed',
  (deploy) => {
    const deployment = deploy();
    let running: Running;
    let url: string;

    beforeAll(async () => {
      running = await deployment.start({ instances: 1, proxied: false });
      url = running.urls[0];
    });
    afterAll(async () => {
      await running?.stop();
      await deployment.close();
    });

    it(`on ${deployment.label}: never a 5xx, always a JSON message, nothing written by a refused request, no forged log line`, async () => {
      // The users the requests may act on, and what the stores must hold: changed only by a 2xx.
      const users: User[] = [];
      const model = new Map<string, string>();
      for (let i = 0; i < 4; i++) {
        const res = await rawRequest(url, {
          method: 'POST',
          path: '/users',
          body: JSON.stringify({ username: freshName('fz') }),
        });
        const user = res.json as User;
        users.push(user);
        model.set(user.id, user.username);
      }

      // A user deleted before the fuzz begins, kept for its secret: a well-formed bearer that opens nothing.
      const gone = users.pop()!;
      model.delete(gone.id);
      const deleted = await rawRequest(url, {
        method: 'DELETE',
        path: `/users/${gone.id}`,
        headers: { authorization: `Bearer ${gone.secret}` },
      });
      expect(deleted.status).toBe(204);
      const toRequest = (s: Shape): RawRequest => {
        // Among the three latest users still there, so that requests keep finding someone to act on.
        const target = 'user' in s.id ? users[Math.max(0, users.length - 1 - s.id.user)] : undefined;
        const id = 'text' in s.id ? percentEncode(s.id.text) : (target?.id ?? '000000000000000');
        const path = {
          users: '/users',
          user: `/users/${id}`,
          rename: `/users/${id}/username`,
          usernames: `/usernames/${percentEncode(s.text)}`,
          search: `/users?username=${percentEncode(s.text)}&${percentEncode(s.text)}=1`,
          other: `/${percentEncode(s.text)}`,
        }[s.target[1]];
        const owner = target ?? users[0] ?? gone;
        const headers: Record<string, string | string[]> = {};
        const bearer = (user: User) => `Bearer ${user.secret}`;
        if (s.auth === 'own') headers.authorization = bearer(owner);
        else if (s.auth === 'other') headers.authorization = bearer(users.find((u) => u !== owner) ?? gone);
        else if (s.auth === 'forged') headers.authorization = `Bearer ${Buffer.alloc(32, 3).toString('base64url')}`;
        else if (s.auth === 'twice') headers.authorization = [bearer(owner), bearer(owner)];
        else if (typeof s.auth === 'object') headers.authorization = s.auth.text;
        if (s.ifMatch !== undefined) headers['if-match'] = s.ifMatch;
        if (s.contentType !== undefined) headers['content-type'] = s.contentType;
        const method = s.target[0];
        return { method, path, headers, body: method === 'GET' || method === 'HEAD' ? undefined : s.body };
      };

      /** What a 2xx did, in the model; anything else must have changed nothing. */
      const apply = (req: RawRequest, res: RawResponse) => {
        const body = res.json as Partial<User> | undefined;
        if (req.method === 'POST' && res.status === 201) {
          model.set(body!.id!, body!.username!);
          users.push(body as User);
        } else if (req.method === 'PATCH' && res.status === 200) model.set(body!.id!, body!.username!);
        else if (req.method === 'DELETE' && res.status === 204) {
          const id = decodeURIComponent(req.path.slice('/users/'.length));
          model.delete(id);
          users.splice(
            users.findIndex((u) => u.id === id),
            1,
          );
        }
      };

      const log = captureOutput();
      const problems: string[] = [];
      try {
        await fc.assert(
          fc.asyncProperty(shape, async (s) => {
            const req = toRequest(s);
            const res = await rawRequest(url, req);
            const what = `${req.method} ${req.path.slice(0, 80)} → ${res.status} ${res.text.slice(0, 200)}`;
            expect(res.status).toBeLessThan(500);
            if (res.status !== 204 && req.method !== 'HEAD') {
              expect(res.headers['content-type']).toMatch(/^application\/json/);
              expect(res.json).toBeDefined();
            }
            if (res.status >= 400 && req.method !== 'HEAD')
              expect(res.json).toEqual(expect.objectContaining({ statusCode: res.status, message: expect.anything() }));
            // No stack frame, no source file.
            expect(res.text).not.toMatch(/\n\s+at |\.[jt]s:\d+/);
            if ((req.method === 'POST' || req.method === 'PATCH') && res.status < 300) {
              // Accepted: then it was `{ "username" }` with a name of the documented rule, and nothing else.
              const sent = JSON.parse(req.body!) as Record<string, unknown>;
              expect(Object.keys(sent)).toEqual(['username']);
              expect(sent.username).toMatch(/^[A-Za-z0-9][A-Za-z0-9_.-]{2,31}$/);
            }
            apply(req, res);
            const state = await deployment.inspect();
            const stored = new Map(state.users.map((u) => [u.id, u.username]));
            const reserved = new Map(state.reservations.map((r) => [r.name, r.userId]));
            const expected = new Map([...model].map(([id, name]) => [name, id]));
            if (JSON.stringify([...stored].sort()) !== JSON.stringify([...model].sort()))
              problems.push(`users after ${what}`);
            if (JSON.stringify([...reserved].sort()) !== JSON.stringify([...expected].sort()))
              problems.push(`reservations after ${what}`);
            expect(problems).toEqual([]);
          }),
          { seed: SEED, numRuns: RUNS, endOnFailure: true },
        );
      } finally {
        log.restore();
      }
      expect(log.linesStartingWith(MARKER)).toEqual([]);
    }, 120_000);
  },
);
