import 'reflect-metadata';
import { describe, expect, it } from '@jest/globals';
import { Controller, Get, Injectable, Module, type INestApplication, type OnModuleDestroy } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Test } from '@nestjs/testing';
import { Agent, request, type IncomingHttpHeaders } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { waitFor } from '../../../../test/support/wait.js';
import { HttpDrainOptionsError } from '../errors.js';
import { HttpDrainModule } from './http-drain.module.js';

/** A request the test holds open until it says so. */
class Gate {
  entered = 0;
  private open: (() => void) | undefined;
  private readonly opened = new Promise<void>((resolve) => (this.open = resolve));
  async pass(): Promise<void> {
    this.entered++;
    await this.opened;
  }
  release(): void {
    this.open!();
  }
}

const gate = { current: new Gate() };
const events: string[] = [];

@Controller()
class TestController {
  @Get('slow')
  async slow() {
    await gate.current.pass();
    events.push('slow answered');
    return { ok: true };
  }

  @Get('fast')
  fast() {
    return { ok: true };
  }
}

/** Stands for a module releasing something a request needs in the first hook after the drain. */
@Injectable()
class Releaser implements OnModuleDestroy {
  onModuleDestroy(): void {
    events.push('onModuleDestroy');
  }
}

interface Answer {
  status?: number;
  headers?: IncomingHttpHeaders;
  error?: string;
}

function get(port: number, path: string, agent: Agent): Promise<Answer> {
  return new Promise((resolve) => {
    const req = request({ host: '127.0.0.1', port, path, agent }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers }));
    });
    req.on('error', (error: NodeJS.ErrnoException) => resolve({ error: error.code ?? error.message }));
    req.end();
  });
}

async function listening(options: Parameters<typeof HttpDrainModule.forRoot>[0]) {
  const moduleRef = await Test.createTestingModule({
    imports: [HttpDrainModule.forRoot(options)],
    controllers: [TestController],
    providers: [Releaser],
  }).compile();
  const app: INestApplication = moduleRef.createNestApplication({ logger: false });
  await app.listen(0, '127.0.0.1');
  const server = app.getHttpServer() as Server;
  return { app, server, port: (server.address() as AddressInfo).port };
}

describe('HttpDrainModule', () => {
  it('on close: stops accepting, answers the request already received with Connection: close, closes idle kept-alive connections, and only then runs the module hooks', async () => {
    gate.current = new Gate();
    events.length = 0;
    const { app, server, port } = await listening({ idleGraceMs: 50 });
    const agent = new Agent({ keepAlive: true });
    try {
      // A kept-alive connection left idle, and one busy with a request the test holds.
      const idle = await get(port, '/fast', agent);
      expect(idle.headers?.connection).toBe('keep-alive');
      const slow = get(port, '/slow', agent);
      await waitFor('the slow request to be running', () => gate.current.entered === 1);

      const closing = app.close();
      await waitFor('the server to stop accepting', () => !server.listening);
      expect(await get(port, '/fast', new Agent())).toEqual({ error: 'ECONNREFUSED' });
      await waitFor('the idle kept-alive connection to be closed', () => idleClosed(agent));
      expect(events).toEqual([]);

      gate.current.release();
      const answer = await slow;
      expect(answer.status).toBe(200);
      expect(answer.headers?.connection).toBe('close');
      await closing;
      expect(events).toEqual(['slow answered', 'onModuleDestroy']);
    } finally {
      gate.current.release();
      agent.destroy();
      await app.close();
    }
  });

  it('cuts a request still running after graceMs, so that close() ends', async () => {
    gate.current = new Gate();
    events.length = 0;
    const { app, port } = await listening({ graceMs: 100 });
    const agent = new Agent({ keepAlive: true });
    try {
      const stuck = get(port, '/slow', agent);
      await waitFor('the stuck request to be running', () => gate.current.entered === 1);
      await app.close();
      expect(await stuck).toEqual({ error: 'ECONNRESET' });
      expect(events).toEqual(['onModuleDestroy']);
    } finally {
      gate.current.release();
      agent.destroy();
    }
  });

  it('an application context without an HTTP server closes as usual', async () => {
    @Module({ imports: [HttpDrainModule.forRoot()] })
    class ContextModule {}
    const context = await NestFactory.createApplicationContext(ContextModule, { logger: false });
    await expect(context.close()).resolves.toBeUndefined();
  });

  it.each([-1, 1.5, Number.NaN])('refuses graceMs %p at once, saying what it takes', (graceMs) => {
    expect(() => HttpDrainModule.forRoot({ graceMs })).toThrow(HttpDrainOptionsError);
    expect(() => HttpDrainModule.forRoot({ graceMs })).toThrow(/graceMs must be a whole number of milliseconds/);
  });
});

/** Whether the agent's kept-alive sockets are all gone (the server closed the idle one). */
function idleClosed(agent: Agent): boolean {
  return Object.values(agent.freeSockets).every((sockets) => (sockets ?? []).length === 0);
}
