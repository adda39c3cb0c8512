import { createHash } from 'node:crypto';
import type { Cluster, Redis } from 'ioredis';

/** A Lua script and its SHA1, sent with EVALSHA. */
export interface LuaScript {
  readonly lua: string;
  readonly sha: string;
}

export function luaScript(lua: string): LuaScript {
  return { lua, sha: createHash('sha1').update(lua).digest('hex') };
}

/**
 * Runs a script on one key by SHA. The first call on each server (and the first after a restart
 * or SCRIPT FLUSH) answers NOSCRIPT; the script is then sent whole with EVAL, which also caches
 * it there. On a Cluster, ioredis routes both to the node owning the key's slot.
 */
export function runScript(
  client: Redis | Cluster,
  script: LuaScript,
  key: string,
  ...args: string[]
): Promise<unknown> {
  return runScriptThen(client, script, key, args, identity);
}

/**
 * `runScript(...).then(map)` in one promise hop rather than two: this is the hot path of every
 * reservation (a plain chain, no async frame).
 */
export function runScriptThen<T>(
  client: Redis | Cluster,
  script: LuaScript,
  key: string,
  args: string[],
  map: (reply: unknown) => T,
): Promise<T> {
  return client.evalsha(script.sha, 1, key, ...args).then(map, (error: unknown) => {
    if (!isNoScript(error)) throw error;
    return client.eval(script.lua, 1, key, ...args).then(map);
  });
}

/**
 * `runScript` for a script on several keys. On a Cluster they must share one slot (one hash
 * tag), or the server refuses the script with CROSSSLOT.
 */
export function runScriptOnKeys(
  client: Redis | Cluster,
  script: LuaScript,
  keys: readonly string[],
  args: ReadonlyArray<string | number>,
): Promise<unknown> {
  return client.evalsha(script.sha, keys.length, ...keys, ...args).catch((error: unknown) => {
    if (!isNoScript(error)) throw error;
    return client.eval(script.lua, keys.length, ...keys, ...args);
  });
}

function isNoScript(error: unknown): boolean {
  return error instanceof Error && error.message.includes('NOSCRIPT');
}

function identity(reply: unknown): unknown {
  return reply;
}
