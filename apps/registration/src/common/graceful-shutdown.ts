import { Logger } from '@nestjs/common';
import { ExpressAdapter } from '@nestjs/platform-express';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { Server as NetServer, type Socket } from 'node:net';

/** How long requests already received have to finish on SIGTERM when SHUTDOWN_TIMEOUT_MS is not set. */
export const DEFAULT_SHUTDOWN_TIMEOUT_MS = 10_000;

/** After the requests: the time left to release the machine ID and close the connections before the process exits anyway. */
export const STORES_CLOSE_TIMEOUT_MS = 5_000;

/** How often the connections are looked at while draining. */
const SWEEP_MS = 50;

/**
 * How long a kept-alive connection may sit idle while draining before it is closed. A client in
 * a loop sends its next request at once: it is read, answered with `Connection: close`, and the
 * connection ends cleanly. Closing an idle connection at once would reset a request already on
 * its way (sent, not yet read), which its client cannot tell from one that was lost mid-run.
 */
const IDLE_GRACE_MS = 1_000;

const logger = new Logger('Shutdown');

/** What the adapter knows of one connection: requests it is answering, and since when it has been idle. */
interface Connection {
  busy: number;
  idleSince: number;
}

/**
 * Nest's Express adapter, drained before the application's shutdown hooks run. Nest calls
 * `beforeClose` first on close — before `onModuleDestroy` (where the machine ID is released)
 * and before the pools close —, and here it resolves only once every request already received
 * has been answered: the server stops accepting connections, each response still to be sent says
 * `Connection: close` (its keep-alive connection ends after it), and a connection idle for
 * IDLE_GRACE_MS is closed. A request still running after `timeoutMs` has its connection cut, so
 * that shutdown stays bounded.
 */
export class DrainingExpressAdapter extends ExpressAdapter {
  private readonly connections = new Map<Socket, Connection>();
  private readonly inFlight = new Set<ServerResponse>();
  private draining = false;

  constructor(private readonly timeoutMs = DEFAULT_SHUTDOWN_TIMEOUT_MS) {
    super();
  }

  override initHttpServer(options: Parameters<ExpressAdapter['initHttpServer']>[0]): void {
    super.initHttpServer(options);
    const server = this.getHttpServer() as Server;
    server.on('connection', (socket: Socket) => {
      this.connections.set(socket, { busy: 0, idleSince: Date.now() });
      socket.once('close', () => this.connections.delete(socket));
    });
    // Beside Express's own listener: every request, whatever answers it.
    server.on('request', (req: IncomingMessage, res: ServerResponse) => this.track(req.socket, res));
  }

  override async beforeClose(): Promise<void> {
    super.beforeClose();
    const server = this.getHttpServer() as Server | undefined;
    if (server === undefined || !server.listening || this.draining) return;
    this.draining = true;
    for (const res of this.inFlight) closeAfter(res);
    // net.Server's close: no new connections. http.Server's would also close every idle
    // connection at once, resetting requests already sent on them (see IDLE_GRACE_MS).
    const closed = new Promise<void>((resolve) => NetServer.prototype.close.call(server, () => resolve()));
    const sweep = setInterval(() => this.closeIdle(), SWEEP_MS);
    this.closeIdle();
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<true>((resolve) => (timer = setTimeout(() => resolve(true), this.timeoutMs)));
    const running = this.inFlight.size;
    try {
      if (await Promise.race([closed.then(() => false), timedOut])) {
        logger.warn(
          `${this.inFlight.size} request(s) still running after ${this.timeoutMs} ms: their connections are cut`,
        );
        server.closeAllConnections();
      } else logger.log(`every request answered (${running} were running); no new connections accepted`);
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
    if (this.draining) closeAfter(res);
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
      if (busy === 0 && now - idleSince >= IDLE_GRACE_MS) socket.destroy();
  }
}

/** The client is told its connection ends with this response, so it sends nothing more on it. */
function closeAfter(res: ServerResponse): void {
  if (!res.headersSent) res.setHeader('Connection', 'close');
}

/**
 * Bounds a shutdown started by Nest's shutdown hooks (`enableShutdownHooks`, which run on the
 * first SIGTERM or SIGINT): the process exits with code 1 should the requests and the release
 * of the stores take longer than `timeoutMs` + STORES_CLOSE_TIMEOUT_MS, and at once on a second
 * signal.
 */
export function boundShutdown(timeoutMs = DEFAULT_SHUTDOWN_TIMEOUT_MS): void {
  let received = false;
  const onSignal = (signal: NodeJS.Signals): void => {
    if (!received) {
      received = true;
      logger.log(`${signal}: answering the requests already received, then closing (send it again to exit now)`);
      setTimeout(() => {
        logger.error(`shutdown took longer than ${timeoutMs + STORES_CLOSE_TIMEOUT_MS} ms: exiting`);
        process.exit(1);
      }, timeoutMs + STORES_CLOSE_TIMEOUT_MS).unref();
      return;
    }
    // Nest unsubscribes once its shutdown is done and raises the signal again to end the process
    // as the signal would: this listener alone is left, and steps aside.
    if (process.listenerCount(signal) === 1) {
      for (const s of SIGNALS) process.off(s, onSignal);
      process.kill(process.pid, signal);
      return;
    }
    logger.warn(`${signal} again: exiting now`);
    process.exit(1);
  };
  for (const s of SIGNALS) process.on(s, onSignal);
}

const SIGNALS: NodeJS.Signals[] = ['SIGTERM', 'SIGINT'];
