import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  Body,
  ConflictException,
  Controller,
  Delete,
  HttpCode,
  type INestApplication,
  Injectable,
  type NestInterceptor,
  NotFoundException,
  Param,
  Post,
  Res,
  UseInterceptors,
  type CallHandler,
  type ExecutionContext,
} from '@nestjs/common';
import { Test } from '@nestjs/testing';
import request from 'supertest';
import type { IdempotencyOutcome, IdempotencyRequest, IdempotencyStore } from '../idempotency.interfaces.js';
import { MemoryIdempotencyStore } from '../stores/memory/memory-idempotency.store.js';
import { deferredWork } from '../testing/index.js';
import { IdempotencyModule } from './idempotency.module.js';
import { Idempotent } from './idempotent.decorator.js';

/** A store that keeps a copy of every result it was handed to record, as the records would hold it. */
class RecordingStore implements IdempotencyStore {
  readonly inner = new MemoryIdempotencyStore();
  readonly recorded: string[] = [];
  run<R>(req: IdempotencyRequest, work: () => Promise<R>): Promise<IdempotencyOutcome<R>> {
    return this.inner.run(req, async () => {
      const result = await work();
      this.recorded.push(JSON.stringify({ key: req.key, fingerprint: req.fingerprint, result }));
      return result;
    });
  }
}

const effects: string[] = [];
const slow = { gate: deferredWork(undefined) };
let failNext = true;

@Controller()
class ThingsController {
  @Post('things')
  @Idempotent({ secretFields: ['secret'] })
  create(@Body() body: { name?: string }, @Res({ passthrough: true }) res: { setHeader(n: string, v: string): void }) {
    effects.push(`create ${body.name}`);
    const id = String(effects.length);
    res.setHeader('Location', `/things/${id}`);
    res.setHeader('ETag', `"${id}"`);
    res.setHeader('X-Not-Kept', 'x');
    return { id, name: body.name, secret: `sec-${id}-${Math.random()}` };
  }

  @Post('required')
  @Idempotent({ required: true })
  required() {
    effects.push('required');
    return { ok: true };
  }

  @Post('slow')
  @Idempotent()
  async slowly() {
    effects.push('slow');
    await slow.gate.work();
    return { slow: true };
  }

  @Post('flaky')
  @Idempotent()
  flaky() {
    effects.push('flaky');
    if (failNext) {
      failNext = false;
      throw new ConflictException('not now');
    }
    return { flaky: 'ok' };
  }

  @Delete('things/:id')
  @HttpCode(204)
  @Idempotent()
  remove(@Param('id') id: string) {
    effects.push(`delete ${id}`);
  }
}

@Controller()
class UnsealedController {
  @Post('unsealed')
  @Idempotent({ secretFields: ['secret'] })
  create() {
    effects.push('unsealed');
    return { secret: 's' };
  }
}

@Controller('whole')
@Idempotent({ secretFields: ['secret'] })
class WhollyUnsealedController {
  @Post()
  create() {
    effects.push('whole');
    return { n: effects.length, secret: `s-${effects.length}` };
  }
}

const key = (() => {
  let n = 0;
  return () => `"key-${++n}-${Date.now()}"`;
})();

describe('@Idempotent() routes (IdempotencyModule over HTTP)', () => {
  let app: INestApplication;
  const store = new RecordingStore();

  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [IdempotencyModule.forRoot({ store, encryptionKey: 'a server secret of at least 32 bytes!!' })],
      controllers: [ThingsController],
    }).compile();
    app = moduleRef.createNestApplication({ logger: false });
    await app.init();
  });

  afterAll(async () => {
    await app?.close();
  });

  const http = () => request(app.getHttpServer());

  it('replays the first response — status, body, the headers that matter — and says so', async () => {
    const k = key();
    const before = effects.length;
    const first = await http().post('/things').set('Idempotency-Key', k).send({ name: 'a' });
    expect(first.status).toBe(201);
    expect(first.headers.location).toMatch(/^\/things\/\d+$/);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    const again = await http().post('/things').set('Idempotency-Key', k).send({ name: 'a' });
    expect(again.status).toBe(201);
    expect(again.body).toEqual(first.body);
    expect(again.headers.location).toBe(first.headers.location);
    expect(again.headers.etag).toBe(first.headers.etag);
    expect(again.headers['content-type']).toMatch(/application\/json/);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.headers['x-not-kept']).toBeUndefined();
    expect(effects.length - before).toBe(1);
  });

  it('replays the kept headers under the names the first response had them (ETag, not etag)', async () => {
    /** The header names as they came over the wire, by their lower-case form. */
    const onTheWire = (res: request.Response): Record<string, string> => {
      const raw = (res as unknown as { res: { rawHeaders: string[] } }).res.rawHeaders;
      return Object.fromEntries(raw.filter((_, i) => i % 2 === 0).map((name) => [name.toLowerCase(), name]));
    };
    const k = key();
    const first = onTheWire(await http().post('/things').set('Idempotency-Key', k).send({ name: 'cased' }));
    const again = onTheWire(await http().post('/things').set('Idempotency-Key', k).send({ name: 'cased' }));
    expect([first.location, first.etag]).toEqual(['Location', 'ETag']);
    for (const name of ['location', 'etag', 'content-type'])
      expect({ name, again: again[name] }).toEqual({ name, again: first[name] });
  });

  it('never stores a secret field in the clear', async () => {
    const k = key();
    const first = await http().post('/things').set('Idempotency-Key', k).send({ name: 'secretive' });
    const secret = (first.body as { secret: string }).secret;
    expect(secret).toMatch(/^sec-/);
    const records = store.recorded.filter((r) => r.includes('secretive'));
    expect(records).toHaveLength(1);
    expect(records[0]).not.toContain(secret);
    // Nor the raw key, nor the credentials: the store key is a digest.
    expect(records[0]).not.toContain(k.slice(1, -1));
    const again = await http().post('/things').set('Idempotency-Key', k).send({ name: 'secretive' });
    expect((again.body as { secret: string }).secret).toBe(secret);
  });

  it('keeps keys per caller: another caller with the same key never sees the first response', async () => {
    const k = key();
    const alice = await http()
      .post('/things')
      .set('Idempotency-Key', k)
      .set('Authorization', 'Bearer alice')
      .send({ name: 'x' });
    const bob = await http()
      .post('/things')
      .set('Idempotency-Key', k)
      .set('Authorization', 'Bearer bob')
      .send({ name: 'x' });
    const anonymous = await http().post('/things').set('Idempotency-Key', k).send({ name: 'x' });
    expect(bob.status).toBe(201);
    expect(bob.headers['idempotent-replayed']).toBeUndefined();
    expect(bob.body.id).not.toBe(alice.body.id);
    expect(anonymous.body.id).not.toBe(alice.body.id);
    const aliceAgain = await http()
      .post('/things')
      .set('Idempotency-Key', k)
      .set('Authorization', 'Bearer alice')
      .send({ name: 'x' });
    expect(aliceAgain.body).toEqual(alice.body);
  });

  it('compares bodies as canonical JSON: the same fields in another order are the same request', async () => {
    const k = key();
    const first = await http()
      .post('/things')
      .set('Idempotency-Key', k)
      .send({ name: 'o', extra: { b: 1, a: 2 } });
    const again = await http()
      .post('/things')
      .set('Idempotency-Key', k)
      .send({ extra: { a: 2, b: 1 }, name: 'o' });
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toEqual(first.body);
  });

  it('answers 422 for the same key with another body, path or method, running nothing', async () => {
    const k = key();
    await http().post('/things').set('Idempotency-Key', k).send({ name: 'p' }).expect(201);
    const before = effects.length;
    const otherBody = await http().post('/things').set('Idempotency-Key', k).send({ name: 'q' });
    expect(otherBody.status).toBe(422);
    expect(otherBody.body.message).toMatch(/another request/);
    await http().post('/required').set('Idempotency-Key', k).expect(422);
    await http().delete('/things/1').set('Idempotency-Key', k).expect(422);
    expect(effects.length).toBe(before);
  });

  it('answers 409 while the first request runs, then replays it', async () => {
    const k = key();
    slow.gate = deferredWork(undefined);
    const first = http()
      .post('/slow')
      .set('Idempotency-Key', k)
      .then((r) => r);
    // The handler is holding: the first request is in progress (or it answered without running it).
    await Promise.race([
      slow.gate.started,
      first.then((r) => Promise.reject(new Error(`answered ${r.status} at once`))),
    ]);
    const during = await http().post('/slow').set('Idempotency-Key', k);
    expect(during.status).toBe(409);
    expect(during.body.message).toMatch(/still being processed/);
    slow.gate.finish();
    expect((await first).status).toBe(201);
    const after = await http().post('/slow').set('Idempotency-Key', k);
    expect(after.headers['idempotent-replayed']).toBe('true');
    expect(slow.gate.calls()).toBe(1);
  });

  it('keeps nothing when the handler fails: the repeat runs again', async () => {
    const k = key();
    failNext = true;
    await http().post('/flaky').set('Idempotency-Key', k).expect(409);
    const again = await http().post('/flaky').set('Idempotency-Key', k);
    expect(again.status).toBe(201);
    expect(again.body).toEqual({ flaky: 'ok' });
    expect(again.headers['idempotent-replayed']).toBeUndefined();
  });

  it('replays a 204 without a body', async () => {
    const k = key();
    const before = effects.length;
    await http().delete('/things/7').set('Idempotency-Key', k).expect(204);
    const again = await http().delete('/things/7').set('Idempotency-Key', k);
    expect(again.status).toBe(204);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(effects.length - before).toBe(1);
  });

  it('runs a request without the header as usual, and refuses it with 400 where the key is required', async () => {
    const before = effects.length;
    await http().post('/things').send({ name: 'n' }).expect(201);
    await http().post('/things').send({ name: 'n' }).expect(201);
    expect(effects.length - before).toBe(2);
    const missing = await http().post('/required');
    expect(missing.status).toBe(400);
    expect(missing.body.message).toMatch(/Idempotency-Key header is required/);
    expect(effects.length - before).toBe(2);
  });

  it.each([
    ['a bare token', 'abc'],
    ['an empty string', '""'],
    ['an unterminated string', '"abc'],
    ['text after the string', '"a"b'],
    ['parameters', '"a";p=1'],
    ['a control character', '"a\tb"'],
    ['a stray backslash', '"a\\b"'],
    ['over 255 characters', `"${'k'.repeat(256)}"`],
  ])('refuses %s as a key with 400, running nothing', async (_what, value) => {
    const before = effects.length;
    const res = await http().post('/required').set('Idempotency-Key', value);
    expect(res.status).toBe(400);
    expect(res.body.message).toMatch(/Idempotency-Key header/);
    expect(effects.length).toBe(before);
  });

  it('accepts escapes and surrounding spaces of a Structured Field string', async () => {
    const unique = `${Date.now()}`;
    const first = await http().post('/required').set('Idempotency-Key', ` "a\\"b\\\\${unique}" `);
    expect(first.status).toBe(201);
    const again = await http().post('/required').set('Idempotency-Key', `"a\\"b\\\\${unique}"`);
    expect(again.headers['idempotent-replayed']).toBe('true');
  });

  it('answers a body nested too deeply to compare with 400, running nothing', async () => {
    const before = effects.length;
    const depth = 40_000;
    const res = await http()
      .post('/required')
      .set('Idempotency-Key', key())
      .set('Content-Type', 'application/json')
      .send(`${'['.repeat(depth)}${']'.repeat(depth)}`);
    expect(res.status).toBe(400);
    expect(effects.length).toBe(before);
  });

  it('refuses a list of keys (two header lines, joined) with 400', async () => {
    const res = await http().post('/required').set('Idempotency-Key', '"a", "b"');
    expect(res.status).toBe(400);
  });

  it('refuses to start with a route naming secret fields and no encryptionKey (it would keep them in the clear)', async () => {
    for (const controller of [UnsealedController, WhollyUnsealedController]) {
      const moduleRef = await Test.createTestingModule({
        imports: [IdempotencyModule.forRootAsync({ useFactory: async () => ({}) })],
        controllers: [controller],
      }).compile();
      const unsealed = moduleRef.createNestApplication({ logger: false });
      await expect(unsealed.init()).rejects.toThrow(
        new RegExp(`${controller.name}\\.create name secretFields, but the module has no encryptionKey`),
      );
      await unsealed.close();
    }
  });

  it('honours @Idempotent() on a whole controller', async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [IdempotencyModule.forRoot({ encryptionKey: 'another server secret of 32+ bytes!!' })],
      controllers: [WhollyUnsealedController],
    }).compile();
    const whole = moduleRef.createNestApplication({ logger: false });
    await whole.init();
    try {
      const k = key();
      const first = await request(whole.getHttpServer()).post('/whole').set('Idempotency-Key', k);
      const again = await request(whole.getHttpServer()).post('/whole').set('Idempotency-Key', k);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(again.body).toEqual(first.body);
      await request(whole.getHttpServer()).post('/whole').set('Idempotency-Key', '"a";b').expect(400);
    } finally {
      await whole.close();
    }
  });

  it('answers a repeat whose kept secret another encryptionKey sealed with a 500 that says so, running nothing', async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [IdempotencyModule.forRoot({ store, encryptionKey: 'a different server secret, 32+ bytes!' })],
      controllers: [ThingsController],
    }).compile();
    const other = moduleRef.createNestApplication({ logger: false });
    await other.init();
    try {
      const k = key();
      expect((await http().post('/things').set('Idempotency-Key', k).send({ name: 'elsewhere' })).status).toBe(201);
      const before = effects.length;
      const again = await request(other.getHttpServer())
        .post('/things')
        .set('Idempotency-Key', k)
        .send({ name: 'elsewhere' });
      expect(again.status).toBe(500);
      expect(again.body.message).toMatch(/cannot be replayed by this server; the request was processed once/);
      expect(effects.length).toBe(before);
    } finally {
      await other.close();
    }
  });

  it('refuses bad module options at once', () => {
    expect(() => IdempotencyModule.forRoot({ encryptionKey: 'short' })).toThrow(/at least 32 bytes/);
    expect(() => IdempotencyModule.forRoot({ header: 'bad header' })).toThrow(/header name/);
    expect(() => IdempotencyModule.forRoot({ ttlMs: 0 })).toThrow(/ttlMs/);
    expect(() => IdempotencyModule.forRoot({ store: {} as IdempotencyStore })).toThrow(/IdempotencyStore/);
  });
});

/** A thing deleted by the routes below, and the check that refuses a request on a deleted one (a 404). */
const deleted = new Set<string>();
let checks = 0;

@Injectable()
class ThingExistsInterceptor implements NestInterceptor {
  intercept(context: ExecutionContext, next: CallHandler) {
    checks++;
    const { id } = context.switchToHttp().getRequest<{ params: { id: string } }>().params;
    if (deleted.has(id)) throw new NotFoundException(`thing ${id} does not exist`);
    return next.handle();
  }
}

@Controller('ordered')
class OrderedController {
  @Delete('below/:id')
  @HttpCode(204)
  @Idempotent()
  @UseInterceptors(ThingExistsInterceptor)
  deleteWrittenBelow(@Param('id') id: string) {
    deleted.add(id);
  }

  @Delete('above/:id')
  @HttpCode(204)
  @UseInterceptors(ThingExistsInterceptor)
  @Idempotent()
  deleteWrittenAbove(@Param('id') id: string) {
    deleted.add(id);
  }
}

describe('@Idempotent() beside other interceptors of its route', () => {
  let app: INestApplication;

  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [IdempotencyModule.forRoot()],
      controllers: [OrderedController],
    }).compile();
    app = moduleRef.createNestApplication({ logger: false });
    await app.init();
  });

  afterAll(async () => {
    await app?.close();
  });

  it.each(['below', 'above'])(
    'runs them inside it, written %s it: a repeat is answered from the record, the check not run again',
    async (where) => {
      const path = `/ordered/${where}/${where}-thing`;
      const k = key();
      const before = checks;
      await request(app.getHttpServer()).delete(path).set('Idempotency-Key', k).expect(204);
      const again = await request(app.getHttpServer()).delete(path).set('Idempotency-Key', k);
      expect(again.status).toBe(204);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(checks - before).toBe(1);
      // Without the key, the request is a new one: the check refuses it.
      await request(app.getHttpServer()).delete(path).expect(404);
    },
  );
});
