// Argument checks shared by the OutboxStore implementations: bad input is refused before a
// store changes anything (and before a value could reach a query as anything but a string or
// a number).

export function checkOwner(owner: unknown): string {
  if (typeof owner !== 'string' || owner.length === 0 || owner.length > 200) {
    throw new TypeError(`outbox: owner must be a non-empty string of at most 200 characters, got ${describe(owner)}`);
  }
  return owner;
}

export function checkTime(value: unknown, what: string): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    throw new TypeError(
      `outbox: ${what} must be a time in epoch milliseconds (a non-negative integer), got ${describe(value)}`,
    );
  }
  return value;
}

export function checkPositiveInteger(value: unknown, what: string): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1) {
    throw new TypeError(`outbox: ${what} must be a positive integer, got ${describe(value)}`);
  }
  return value;
}

export function checkEventIds(ids: unknown, what = 'eventIds'): string[] {
  if (!Array.isArray(ids)) throw new TypeError(`outbox: ${what} must be an array of event ids, got ${describe(ids)}`);
  for (const id of ids) {
    if (typeof id !== 'string' || id.length === 0 || id.length > 200)
      throw new TypeError(`outbox: every event id must be a non-empty string, got ${describe(id)}`);
  }
  return ids as string[];
}

export function checkEventId(id: unknown): string {
  return checkEventIds([id], 'eventId')[0];
}

export function checkText(value: unknown, what: string): string {
  if (typeof value !== 'string') throw new TypeError(`outbox: ${what} must be a string, got ${describe(value)}`);
  return value;
}

/** The message kept as `lastError`: an Error's message (its name when it has none), bounded. */
export function errorText(error: unknown): string {
  const text = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  return text.length > 2000 ? `${text.slice(0, 2000)}…` : text;
}

function describe(value: unknown): string {
  try {
    return typeof value === 'string'
      ? JSON.stringify(value)
      : typeof value === 'object' && value !== null
        ? JSON.stringify(value)
        : String(value);
  } catch {
    return String(value);
  }
}
