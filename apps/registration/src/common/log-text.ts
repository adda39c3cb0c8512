/**
 * What may reach a log line from outside — an ID, a name, a driver's message that quotes a value
 * — goes through `logText`, so that it can never start a line of its own: it is escaped the way
 * JSON escapes a string (without the quotes), and further the characters JSON leaves as they are
 * although a terminal or a log collector breaks or rewrites the line on them (DEL, the C1
 * controls such as NEL, U+2028 and U+2029). Lone surrogates are escaped too.
 */
export function logText(value: unknown): string {
  const text = typeof value === 'string' ? value : String(value);
  return JSON.stringify(text)
    .slice(1, -1)
    .replace(/\\"/g, '"')
    .replace(/[\u007f-\u009f\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/**
 * An error as two log arguments: its message, and its stack with the header (`Name: message`,
 * the only part of a stack that can hold outside text) escaped; the frames below it are the
 * code's. A stack whose header no longer matches its message (a message changed after the
 * error was made) is escaped whole.
 */
export function loggableError(error: unknown): { message: string; stack?: string } {
  if (!(error instanceof Error)) return { message: logText(error) };
  const message = logText(error.message);
  const stack = error.stack;
  if (stack === undefined) return { message };
  const header = error.message === '' ? error.name : `${error.name}: ${error.message}`;
  if (!stack.startsWith(header)) return { message, stack: logText(stack) };
  return { message, stack: logText(header) + stack.slice(header.length) };
}
