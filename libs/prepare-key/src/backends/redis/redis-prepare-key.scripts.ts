import { createHash } from 'node:crypto';
import type { Cluster, Redis } from 'ioredis';

/** A Lua script and its SHA1, sent with EVALSHA. */
export interface LuaScript {
  readonly lua: string;
  readonly sha: string;
}

function luaScript(body: string): LuaScript {
  const lua = PRELUDE + body;
  return { lua, sha: createHash('sha1').update(lua).digest('hex') };
}

// A record is one string key holding "<ttlAt>|<canonical JSON>": one GET reads it whole and
// the value compares as a plain string. Expiry is decided with the Redis server's own clock
// (TIME), so every instance of an application agrees on it whatever its local clock says.
// Writes take ARGV[1] = the record and ARGV[2] = when Redis drops it (epoch ms; "0": never).
const PRELUDE = `
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local function ttl_of(record)
  return tonumber(string.sub(record, 1, string.find(record, '|', 1, true) - 1))
end
local function value_of(record)
  return string.sub(record, string.find(record, '|', 1, true) + 1)
end
local function write(now)
  local drop_at = ARGV[2]
  if drop_at == '0' then
    redis.call('SET', KEYS[1], ARGV[1])
  elseif tonumber(drop_at) > now then
    redis.call('SET', KEYS[1], ARGV[1], 'PXAT', drop_at)
  else
    -- already past its retention: the record is gone at once, as if Redis had dropped it
    redis.call('DEL', KEYS[1])
  end
  return 1
end
`;

/** Writes the record when the key is absent or its record has expired. */
export const PREPARE = luaScript(`
local now = now_ms()
local current = redis.call('GET', KEYS[1])
if current and ttl_of(current) > now then return 0 end
return write(now)
`);

/**
 * Replaces the record: with ARGV[3], only while its value equals ARGV[3] (expired or not);
 * without, only while it has not expired.
 */
export const REPREPARE = luaScript(`
local current = redis.call('GET', KEYS[1])
if not current then return 0 end
local now = now_ms()
if ARGV[3] then
  if value_of(current) ~= ARGV[3] then return 0 end
elseif ttl_of(current) <= now then
  return 0
end
return write(now)
`);

/** Deletes the record while its value equals ARGV[1]. */
export const ROLLBACK_IF_VALUE = luaScript(`
local current = redis.call('GET', KEYS[1])
if current and value_of(current) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`);

/** The server's time (epoch ms) and the record, or nil: `get` then filters expiry with that clock. */
export const READ = luaScript(`
return { now_ms(), redis.call('GET', KEYS[1]) }
`);

/**
 * Runs a script on the record key by SHA. The first call on each server (and the first after a
 * restart or SCRIPT FLUSH) answers NOSCRIPT; the script is then sent whole with EVAL, which
 * also caches it there. On a Cluster, ioredis routes both to the node owning the key's slot.
 */
export function runScript(client: Redis | Cluster, script: LuaScript, key: string, ...args: string[]): Promise<unknown> {
  // A plain promise chain rather than an async function: this is the hot path of every operation.
  return client.evalsha(script.sha, 1, key, ...args).catch((error: unknown) => {
    if (!(error instanceof Error) || !error.message.includes('NOSCRIPT')) throw error;
    return client.eval(script.lua, 1, key, ...args);
  });
}
