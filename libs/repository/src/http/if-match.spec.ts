import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  BadRequestException,
  Catch,
  Controller,
  Delete,
  Get,
  HttpCode,
  NotFoundException,
  Param,
  Patch,
  type INestApplication,
} from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import { Test } from '@nestjs/testing';
import request from 'supertest';
import { InMemoryRepository } from '../backends/memory/in-memory.repository.js';
import { Counter } from '../testing/counter.aggregate.js';
import { DddKitExceptionFilter } from './ddd-kit-exception.filter.js';
import { ETag } from './etag.interceptor.js';
import { etagOf, IfMatch, parseIfMatch } from './if-match.js';

const counters = new InMemoryRepository<string, Counter>({ aggregate: Counter });

const view = (counter: Counter) => ({ id: counter.id, count: counter.count, version: counter.version });

/** An API over one repository: If-Match honoured by the write alone, its ETag from the result. */
@Controller('counters')
class CountersController {
  @Get(':id')
  @ETag()
  async get(@Param('id') id: string) {
    return view(await this.load(id));
  }

  @Patch(':id')
  @ETag()
  async increment(@Param('id') id: string, @IfMatch({ required: true }) expectedVersion: number) {
    const counter = await this.load(id);
    counter.increment();
    await counters.update(counter, { expectedVersion });
    return view(counter);
  }

  @Get(':id/count')
  @ETag((result: { n: number; at: number }) => result.at)
  async count(@Param('id') id: string) {
    const counter = await this.load(id);
    return { n: counter.count, at: counter.version };
  }

  @Delete(':id')
  @HttpCode(204)
  async remove(@Param('id') id: string, @IfMatch() expectedVersion: number | undefined) {
    const counter = await this.load(id);
    await counters.remove(counter, expectedVersion === undefined ? undefined : { expectedVersion });
  }

  private async load(id: string): Promise<Counter> {
    const counter = await counters.findById(id);
    if (counter === null) throw new NotFoundException(`no counter '${id}'`);
    return counter;
  }
}

@Catch()
class ApiExceptionFilter extends DddKitExceptionFilter {
  protected override readonly optimisticLockStatus = 412;
}

describe('parseIfMatch', () => {
  it.each([
    ['1', 1],
    ['"1"', 1],
    ['W/"12"', 12],
    [' "3" ', 3],
    ['0', 0],
  ])('reads %p as version %p', (header, version) => {
    expect(parseIfMatch([header], true)).toBe(version);
    expect(parseIfMatch(header)).toBe(version);
  });

  it('absent: undefined where the route allows it, else a 400', () => {
    expect(parseIfMatch(undefined)).toBeUndefined();
    expect(parseIfMatch([])).toBeUndefined();
    expect(() => parseIfMatch(undefined, true)).toThrow(BadRequestException);
    expect(() => parseIfMatch([], true)).toThrow(/requires If-Match/);
  });

  it.each([[['']], [['yesterday']], [['*']], [['"1", "2"']], [['"1"', '"1"']], [['-1']], [['1'.repeat(16)]]])(
    'refuses %p with a 400, required or not',
    (lines) => {
      expect(() => parseIfMatch(lines)).toThrow(BadRequestException);
      expect(() => parseIfMatch(lines, true)).toThrow(BadRequestException);
    },
  );

  it('etagOf quotes the version', () => {
    expect(etagOf(7)).toBe('"7"');
    expect(parseIfMatch(etagOf(7))).toBe(7);
  });
});

describe('@IfMatch() and @ETag() over HTTP', () => {
  let app: INestApplication;
  let n = 0;

  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({
      controllers: [CountersController],
      providers: [{ provide: APP_FILTER, useClass: ApiExceptionFilter }],
    }).compile();
    app = moduleRef.createNestApplication({ logger: false });
    await app.init();
  });
  afterAll(async () => {
    await app?.close();
  });

  const http = () => request(app.getHttpServer());
  async function stored(): Promise<string> {
    const counter = new Counter(`c${++n}`, 'http');
    await counters.insert(counter);
    return counter.id;
  }

  it('sends the version as ETag, and takes it back in If-Match: one write, 412 when stale', async () => {
    const id = await stored();
    const read = await http().get(`/counters/${id}`).expect(200);
    expect(read.headers.etag).toBe('"1"');

    const written = await http().patch(`/counters/${id}`).set('If-Match', read.headers.etag!).expect(200);
    expect(written.body).toEqual({ id, count: 1, version: 2 });
    expect(written.headers.etag).toBe('"2"');

    const stale = await http().patch(`/counters/${id}`).set('If-Match', '"1"').expect(412);
    // The version it is at, as the write read it: the client knows what to read again.
    expect(stale.body.message).toBe(`Counter "${id}" is at version 2, not 1: read it again`);
    expect((await counters.findById(id))!.count).toBe(1);
    // A version the store never reached is as stale.
    await http().patch(`/counters/${id}`).set('If-Match', '"9"').expect(412);
    await http().patch(`/counters/${id}`).set('If-Match', 'W/"2"').expect(200);
  });

  it('a route that requires If-Match answers 400 without it, and for a malformed, empty or repeated one; nothing written', async () => {
    const id = await stored();
    for (const ifMatch of [undefined, 'yesterday', '', ['"1"', '"1"']]) {
      const req = http().patch(`/counters/${id}`);
      const res = await (ifMatch === undefined ? req : req.set('If-Match', ifMatch as string));
      expect({ ifMatch, status: res.status }).toEqual({ ifMatch, status: 400 });
    }
    expect(await counters.currentVersion(id)).toBe(1);
  });

  it('where If-Match is optional, none means no precondition (never a 412); a stale one is a 412', async () => {
    const id = await stored();
    await http().delete(`/counters/${id}`).set('If-Match', '"2"').expect(412);
    await http().delete(`/counters/${id}`).set('If-Match', 'nope').expect(400);
    expect(await counters.currentVersion(id)).toBe(1);
    await http().delete(`/counters/${id}`).expect(204);
    expect(await counters.currentVersion(id)).toBe(-1);
    const other = await stored();
    await http().delete(`/counters/${other}`).set('If-Match', '1').expect(204);
  });

  it('@ETag(versionOf) reads the version where the result keeps it', async () => {
    const id = await stored();
    expect((await http().get(`/counters/${id}/count`).expect(200)).headers.etag).toBe('"1"');
  });
});
