import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { INestApplication } from '@nestjs/common';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import net from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import request from 'supertest';
import { backends, createTestApp, freshName, sharedBackend, sharedBackendEnv } from './support/test-app.js';

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
      Array.from({ length: CALLERS }, (_, i) => http.post('/users').send({ username: i % 2 ? name : name.toUpperCase() })),
    );
    const statuses = responses.map((r) => r.status).sort();
    expect(statuses.filter((s) => s === 201)).toHaveLength(1);
    expect(statuses.filter((s) => s === 409)).toHaveLength(CALLERS - 1);
    const winner = responses.find((r) => r.status === 201)!.body;
    expect((await http.get('/users').query({ username: name }).expect(200)).body).toEqual([winner]);
    await http.get(`/users/${winner.id}`).expect(200, winner);
  });
});

// Two OS processes of the built app (`npm run build` first; CI does) sharing Redis and MongoDB.
describe('two app instances sharing Redis and MongoDB', () => {
  const main = join(dirname(fileURLToPath(import.meta.url)), '..', 'dist', 'main.js');
  const children: ChildProcess[] = [];
  const urls: string[] = [];

  beforeAll(async () => {
    if (!existsSync(main)) throw new Error(`${main} is missing: run \`npm run build\` before \`npm test\``);
    const config = sharedBackend.config();
    for (let i = 0; i < 2; i++) {
      const port = await freePort();
      const child = spawn(process.execPath, [main], {
        env: {
          ...process.env,
          PORT: String(port),
          ...sharedBackendEnv(config),
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      children.push(child);
      urls.push(`http://127.0.0.1:${port}`);
    }
    await Promise.all(urls.map((url, i) => waitForHealth(url, children[i])));
  }, 60_000);

  afterAll(async () => {
    await Promise.all(children.map(stop));
  });

  it('the two instances lease different machine IDs and serve one set of users', async () => {
    const [a, b] = await Promise.all(urls.map((url) => request(url).post('/users').send({ username: freshName('inst') }).expect(201)));
    expect(a.body.id).not.toBe(b.body.id);
    await request(urls[1]).get(`/users/${a.body.id}`).expect(200, a.body);
    await request(urls[0]).get(`/users/${b.body.id}`).expect(200, b.body);
  });

  it(`${CALLERS} concurrent POST /users with one name across both: exactly one 201, one user stored`, async () => {
    const name = freshName('multi');
    const responses = await Promise.all(
      Array.from({ length: CALLERS }, (_, i) => request(urls[i % 2]).post('/users').send({ username: name })),
    );
    const created = responses.filter((r) => r.status === 201);
    expect(created).toHaveLength(1);
    expect(responses.filter((r) => r.status === 409)).toHaveLength(CALLERS - 1);
    for (const url of urls) {
      expect((await request(url).get('/users').query({ username: name }).expect(200)).body).toEqual([created[0].body]);
    }
  });
});

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

async function waitForHealth(url: string, child: ChildProcess): Promise<void> {
  let output = '';
  child.stdout!.on('data', (d) => (output += d));
  child.stderr!.on('data', (d) => (output += d));
  const deadline = Date.now() + 45_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`app instance exited with ${child.exitCode}:\n${output}`);
    try {
      if ((await fetch(`${url}/health`)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`app instance at ${url} did not answer /health:\n${output}`);
}

function stop(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
    setTimeout(() => child.kill('SIGKILL'), 10_000).unref();
  });
}
