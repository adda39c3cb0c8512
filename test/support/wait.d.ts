// Types for wait.js (plain ESM JavaScript, shared with the server set-up, worker fixtures and the bench).
export { setTimeout as sleep } from 'node:timers/promises';

export declare const HANG_MS: number;

export declare function waitFor<T>(
  what: string,
  until: PromiseLike<T> | (() => T | PromiseLike<T>),
  options?: { timeoutMs?: number },
): Promise<Exclude<T, false | undefined | null>>;
