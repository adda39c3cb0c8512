import { jest } from '@jest/globals';

/** What a terminal or a log collector takes for the end of a line. */
const LINE_BREAK = /\r\n|[\n\r\v\f\u0085\u2028\u2029]/;

/** The colour codes ConsoleLogger puts around its prefix on a terminal. */
// eslint-disable-next-line no-control-regex
const ANSI_COLOR = /\x1b\[[0-9;]*m/g;

export interface CapturedOutput {
  /** Everything written to stdout and stderr since the capture began. */
  readonly text: string;
  /** The lines of `text`, split wherever any reader of the log would see a new line. */
  lines(): string[];
  /** Lines that start (after blanks) with `marker`: request text that made a line of its own. */
  linesStartingWith(marker: string): string[];
  clear(): void;
  restore(): void;
}

/**
 * Captures what this process writes to stdout and stderr (where Nest's ConsoleLogger writes,
 * stack traces included) instead of printing it. An in-process app's log, as an operator would read it.
 */
export function captureOutput(): CapturedOutput {
  let text = '';
  const record = (chunk: unknown): boolean => {
    text += typeof chunk === 'string' ? chunk : Buffer.from(chunk as Uint8Array).toString('utf8');
    return true;
  };
  const spies = [
    jest.spyOn(process.stdout, 'write').mockImplementation(record),
    jest.spyOn(process.stderr, 'write').mockImplementation(record),
  ];
  const lines = () => text.split(LINE_BREAK);
  return {
    get text() {
      return text;
    },
    lines,
    linesStartingWith: (marker) =>
      lines().filter((line) => line.replace(ANSI_COLOR, '').trimStart().startsWith(marker)),
    clear: () => {
      text = '';
    },
    restore: () => spies.forEach((spy) => spy.mockRestore()),
  };
}
