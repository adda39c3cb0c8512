// Waiting in tests, written once: for a condition, or for an event. A wait never decides a test
// by how fast the machine is: it ends as soon as the thing waited for happens, and its ceiling
// only turns a hang into a failure that says what did not happen and what was last seen.
// Plain ESM JavaScript, so the server set-up (server-provider.js), worker fixtures (.mjs) and the
// bench use the same helper as the specs (types in wait.d.ts).
import { inspect } from 'node:util';

export { setTimeout as sleep } from 'node:timers/promises';

/** Far above anything a healthy but busy 2-core machine needs; reaching it means a hang. */
export const HANG_MS = 30_000;

/**
 * Waits for `until`: a promise (an event), or a check polled until it returns something other
 * than `false`, `undefined` or `null` without throwing (an `expect` inside a check is fine).
 * Resolves with what the promise or the check gave. Past `timeoutMs` it rejects naming `what`
 * and, for a check, the last value it returned or the last error it threw.
 */
export async function waitFor(what, until, { timeoutMs = HANG_MS } = {}) {
  let timer;
  let timedOut = false;
  let lastSeen = 'nothing: the check never answered';
  // One ceiling for the whole wait, a check that never settles included.
  const ceiling = new Promise((_, reject) => {
    timer = setTimeout(() => {
      timedOut = true;
      const seen = typeof until === 'function' ? `; last seen: ${lastSeen}` : '; it did not happen';
      reject(new Error(`waited ${timeoutMs} ms for ${what}${seen}`));
    }, timeoutMs);
  });
  try {
    if (typeof until !== 'function') return await Promise.race([until, ceiling]);
    for (let pause = 2; ; pause = Math.min(pause * 2, 100)) {
      try {
        const value = await Promise.race([until(), ceiling]);
        if (value !== false && value !== undefined && value !== null) return value;
        lastSeen = inspect(value);
      } catch (error) {
        if (timedOut) throw error;
        lastSeen = error instanceof Error ? `${error.name}: ${error.message}` : inspect(error);
      }
      await Promise.race([new Promise((resolve) => setTimeout(resolve, pause)), ceiling]);
    }
  } finally {
    clearTimeout(timer);
  }
}
