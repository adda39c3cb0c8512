import { Inject, Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { Server as NetServer, type Socket } from 'node:net';
import { HTTP_DRAIN_OPTIONS } from './http-drain.constants.js';

/** `HttpDrainModule.forRoot` options. */
export interface HttpDrainOptions {
  /**
   * How long the requests already received have to finish once the shutdown started; after
   * that their connections are cut, so that the process exits in bounded time. Default 10 s.
   */
  graceMs?: number;
  /**
   * How long a kept-alive connection may sit idle while draining before it is closed; default 1 s.
   * A client in a loop sends its next request at once: it is read, answered with
   * `Connection: close`, and the connection ends cleanly. Closing an idle connection at once would
   * reset a request already on its way (sent, not yet read), which its client cannot tell from
   * one lost mid-run.
   */
  idleGraceMs?: number;
}

export const DEFAULT_HTTP_DRAIN_GRACE_MS = 10_000;
export const DEFAULT_HTTP_DRAIN_IDLE_GRACE_MS = 1_000;

/** How often the connections are looked at while draining. */
const SWEEP_MS = 50;

/** What the drain knows of one connection: requests it is answering, and since when it has been idle. */
interface Connection {
  busy: number;
  idleSince: number;
}

/** The one method of Nest's HTTP adapters the drain takes over (`HttpServer.beforeClose`). */
interface ClosingAdapter {
  beforeClose?: () => void | Promise<void>;
  getHttpServer(): unknown;
}

/**
 * Drains the application's HTTP server in the first step of `app.close()`. Nest's shutdown runs,
 * in order: the HTTP adapter's `beforeClose`, every `onModuleDestroy`, every
 * `beforeApplicationShutdown`, the closing of the HTTP server, every `onApplicationShutdown`.
 * Nest's own closing of the server waits for every connection to end, and a client that keeps
 * sending on a kept-alive connection never lets it end. So the drain takes the adapter's
 * `beforeClose` (a module hook would come after other modules' `onModuleDestroy`) and resolves
 * only once every request already received has been answered: the server stops accepting
 * connections, each response still to be sent says `Connection: close` (its connection ends after
 * it), and a connection idle for `idleGraceMs` is closed. A request still running after `graceMs`
 * has its connection cut. What a request needs (the machine ID, pools, clients) is released
 * after that, in `onApplicationShutdown`.
 *
 * It listens to the Node.js `http.Server`'s own events, not the framework's (tested with Express).
 * An application context without an HTTP server (`createApplicationContext`) has nothing to drain.
 */
@Injectable()
export class HttpDrain implements OnModuleInit {
  private readonly logger = new Logger('HttpDrain');
  private readonly connections = new Map<Socket, Connection>();
  private readonly inFlight = new Set<ServerResponse>();
  private readonly graceMs: number;
  private readonly idleGraceMs: number;
  private draining: Promise<void> | undefined;
  private server: Server | undefined;

  constructor(
    @Inject(HttpAdapterHost) private readonly host: HttpAdapterHost,
    @Inject(HTTP_DRAIN_OPTIONS) options: HttpDrainOptions,
  ) {
    this.graceMs = options.graceMs ?? DEFAULT_HTTP_DRAIN_GRACE_MS;
    this.idleGraceMs = options.idleGraceMs ?? DEFAULT_HTTP_DRAIN_IDLE_GRACE_MS;
  }

  onModuleInit(): void {
    const adapter = this.host.httpAdapter as ClosingAdapter | undefined;
    const server = adapter?.getHttpServer() as Server | undefined;
    if (adapter === undefined || server === undefined || typeof server.on !== 'function') return;
    this.server = server;
    server.on('connection', (socket: Socket) => {
      this.connections.set(socket, { busy: 0, idleSince: Date.now() });
      socket.once('close', () => this.connections.delete(socket));
    });
    // Beside the framework's own listener: every request, whatever answers it.
    server.on('request', (req: IncomingMessage, res: ServerResponse) => this.track(req.socket, res));
    const beforeClose = adapter.beforeClose?.bind(adapter);
    adapter.beforeClose = async () => {
      await beforeClose?.();
      await this.drain();
    };
  }

  /**
   * What `app.close()` runs first: resolves once every request already received was answered, or
   * cut after `graceMs`. Idempotent; nothing to do when the server does not listen.
   */
  drain(): Promise<void> {
    const server = this.server;
    if (server === undefined) return Promise.resolve();
    return (this.draining ??= this.run(server));
  }

  private async run(server: Server): Promise<void> {
    if (!server.listening) return;
    for (const res of this.inFlight) closeAfter(res);
    // net.Server's close: no new connections. http.Server's would also close every idle
    // connection at once, resetting requests already sent on them (see idleGraceMs).
    const closed = new Promise<void>((resolve) => NetServer.prototype.close.call(server, () => resolve()));
    const sweep = setInterval(() => this.closeIdle(), SWEEP_MS);
    this.closeIdle();
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<true>((resolve) => (timer = setTimeout(() => resolve(true), this.graceMs)));
    const running = this.inFlight.size;
    try {
      if (await Promise.race([closed.then(() => false), timedOut])) {
        this.logger.warn(
          `${this.inFlight.size} request(s) still running after ${this.graceMs} ms: their connections are cut`,
        );
        for (const socket of this.connections.keys()) socket.destroy();
      } else this.logger.log(`every request answered (${running} were running); no new connections accepted`);
    } finally {
      clearInterval(sweep);
      clearTimeout(timer);
    }
  }

  private track(socket: Socket, res: ServerResponse): void {
    if (res.writableFinished) return;
    const connection = this.connections.get(socket);
    if (connection !== undefined) connection.busy++;
    this.inFlight.add(res);
    if (this.draining !== undefined) closeAfter(res);
    res.once('close', () => {
      this.inFlight.delete(res);
      if (connection === undefined) return;
      connection.busy--;
      connection.idleSince = Date.now();
    });
  }

  private closeIdle(): void {
    const now = Date.now();
    for (const [socket, { busy, idleSince }] of this.connections)
      if (busy === 0 && now - idleSince >= this.idleGraceMs) socket.destroy();
  }
}

/** The client is told its connection ends with this response, so it sends nothing more on it. */
function closeAfter(res: ServerResponse): void {
  if (!res.headersSent) res.setHeader('Connection', 'close');
}
