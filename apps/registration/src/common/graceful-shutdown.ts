import { Logger } from '@nestjs/common';
import { DEFAULT_HTTP_DRAIN_GRACE_MS } from '@ddd-kit/repository/http';

/** How long requests already received have to finish on SIGTERM when SHUTDOWN_TIMEOUT_MS is not set. */
export const DEFAULT_SHUTDOWN_TIMEOUT_MS = DEFAULT_HTTP_DRAIN_GRACE_MS;

/** After the requests: the time left to release the machine ID and close the connections before the process exits anyway. */
export const STORES_CLOSE_TIMEOUT_MS = 5_000;

const logger = new Logger('Shutdown');

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
