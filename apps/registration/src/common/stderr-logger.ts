import { ConsoleLogger, type LogLevel } from '@nestjs/common';

/**
 * Nest's console logger with every line on stderr: for the one-off commands (`npm run reconcile`,
 * `npm run schema`), whose stdout is their output (a JSON report, DDL) and must stay parseable.
 */
export class StderrLogger extends ConsoleLogger {
  protected override printMessages(
    messages: unknown[],
    context?: string,
    logLevel?: LogLevel,
    _writeStreamType?: 'stdout' | 'stderr',
    errorStack?: unknown,
    params?: Record<string, unknown>,
  ): void {
    super.printMessages(messages, context, logLevel, 'stderr', errorStack, params);
  }
}
