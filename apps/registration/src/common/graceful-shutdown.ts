import { Logger } from '@nestjs/common';
import { ExpressAdapter } from '@nestjs/platform-express';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';

/** How long requests already received have to finish on SIGTERM when SHUTDOWN_TIMEOUT_MS is not set. */
export const DEFAULT_SHUTDOWN_TIMEOUT_MS = 10_000;

/** After the requests: the time left to release the machine ID and close the connections before the process exits anyway. */
export const STORES_CLOSE_TIMEOUT_MS = 5_000;

/** How often a connection that went idle while draining is looked for (and closed). */
const IDLE_SWEEP_MS = 50;

const logger = new Logger('Shutdown');

/**
 * Nest's Express adapter, drained before the application's shutdown hooks run. Nest calls
 * `beforeClose` first on close — before `onModuleDestroy` (where the machine ID is released)
 * and before the pools close —, and here it resolves only once every request already received
 * has been answered: the server stops accepting connections, each response still to be sent says
 * `Connection: close` (its keep-alive connection ends after it), idle connections are closed. A
 * request still running after `timeoutMs` has its connection cut, so that shutdown stays bounded.
 */
export class DrainingExpressAdapter extends ExpressAdapter {
  private readonly inFlight = new Set<ServerResponse>();
  private draining = false;

  constructor(private readonly timeoutMs = DEFAULT_SHUTDOWN_TIMEOUT_MS) {
    super();
  }

  override initHttpServer(options: Parameters<ExpressAdapter['initHttpServer']>[0]): void {
    super.initHttpServer(options);
    // Beside Express's own listener: every request, whatever answers it.
    (this.getHttpServer() as Server).on('request', (_req: IncomingMessage, res: ServerResponse) => this.track(res));
  }

  override async beforeClose(): Promise<void> {
    super.beforeClose();
    const server = this.getHttpServer() as Server | undefined;
    if (server === undefined || !server.listening || this.draining) return;
    this.draining = true;
    for (const res of this.inFlight) closeAfter(res);
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    // Node closes the idle connections when it stops listening; these sweeps close the ones that go
    // idle later (a response sent before the drain began, its connection kept alive).
    server.closeIdleConnections();
    const sweep = setInterval(() => server.closeIdleConnections(), IDLE_SWEEP_MS);
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

  private track(res: ServerResponse): void {
    if (res.writableFinished) return;
    this.inFlight.add(res);
    if (this.draining) closeAfter(res);
    res.once('close', () => this.inFlight.delete(res));
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
