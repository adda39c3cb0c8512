import { luaScript as coreLuaScript, type LuaScript } from '@ddd-kit/core/redis';

function luaScript(body: string): LuaScript {
  return coreLuaScript(PRELUDE + SEAL_CHECK + body);
}

/** The error reply of a script that found the seal missing (RedisSeals). */
export const UNSEALED = 'UNSEALED';

// A record is one string key holding "<ttlAt>|<op>|<canonical JSON>": one GET reads it whole,
// the value compares as a plain string, and <op> names the operation that wrote it. A rollback
// leaves a tombstone "-|<op>|" that Redis drops TOMBSTONE_MS later: readers see no record, and
// a resent rollback finds its own op there. So every script answers a resend of its own command
// (ioredis resends unanswered commands after a reconnect) as the first run did.
// Expiry is decided with the Redis server's own clock (TIME), so every instance of an
// application agrees on it whatever its local clock says.
// A key that checks the seal passes it as KEYS[2] (co-slotted with the record, see RedisSeals):
// when it is missing, the store lost its data, and the script answers the error reply UNSEALED
// before it reads or writes anything. The restore itself passes no KEYS[2].
// Writes take ARGV[1] = the record, ARGV[2] = when Redis drops it (epoch ms; "0": never),
// ARGV[3] = the op.
export const TOMBSTONE_MS = 120_000;

const PRELUDE = `
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
-- ttlAt (nil for a tombstone), op, value
local function parse(record)
  local a = string.find(record, '|', 1, true)
  local b = string.find(record, '|', a + 1, true)
  return tonumber(string.sub(record, 1, a - 1)), string.sub(record, a + 1, b - 1), string.sub(record, b + 1)
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

const SEAL_CHECK = `
if KEYS[2] and redis.call('EXISTS', KEYS[2]) == 0 then
  return redis.error_reply('${UNSEALED} the reservations were lost: the seal is missing')
end
`;

/**
 * Writes the record when the key is absent, a tombstone, or its record has expired. `prepare`
 * sends it only after its native `SET … NX GET` found a record it cannot settle alone (one with
 * a ttlAt, or a tombstone), or on a server without `SET … NX GET`: that SET writes this very
 * record, so the script reads both alike.
 */
export const PREPARE = luaScript(`
local current = redis.call('GET', KEYS[1])
local now = now_ms()
if current then
  local ttl, op = parse(current)
  if ttl then
    if op == ARGV[3] then return 1 end
    if ttl > now then return 0 end
  end
end
return write(now)
`);

/**
 * Replaces the record: with ARGV[4], only while its value equals ARGV[4] (expired or not);
 * without, only while it has not expired.
 */
export const REPREPARE = luaScript(`
local current = redis.call('GET', KEYS[1])
if not current then return 0 end
local ttl, op, value = parse(current)
if not ttl then return 0 end
if op == ARGV[3] then return 1 end
local now = now_ms()
if ARGV[4] then
  if value ~= ARGV[4] then return 0 end
elseif ttl <= now then
  return 0
end
return write(now)
`);

/**
 * Deletes the record, leaving a tombstone with ARGV[1] = the op. ARGV[2] = 'value' or 'op':
 * only while the record's value (or op) equals ARGV[3]; absent: whatever it holds.
 */
export const ROLLBACK = luaScript(`
local current = redis.call('GET', KEYS[1])
if not current then return 0 end
local ttl, op, value = parse(current)
if not ttl then
  if op == ARGV[1] then return 1 end
  return 0
end
if ARGV[2] == 'value' and value ~= ARGV[3] then return 0 end
if ARGV[2] == 'op' and op ~= ARGV[3] then return 0 end
redis.call('SET', KEYS[1], '-|' .. ARGV[1] .. '|', 'PX', ${TOMBSTONE_MS})
return 1
`);

/** The server's time (epoch ms) and the record, or nil: `get` then filters expiry with that clock. */
export const READ = luaScript(`
return { now_ms(), redis.call('GET', KEYS[1]) }
`);

/**
 * READ of many records at once, on one node: ARGV[1] = 'seal' when KEYS[1] is the seal to check
 * (the records follow), else every key is a record. The server's time (epoch ms) and each
 * record, or false.
 */
export const READ_MANY = coreLuaScript(`
local first = 1
if ARGV[1] == 'seal' then
  if redis.call('EXISTS', KEYS[1]) == 0 then
    return redis.error_reply('${UNSEALED} the reservations were lost: the seal is missing')
  end
  first = 2
end
local t = redis.call('TIME')
local records = {}
for i = first, #KEYS do records[#records + 1] = redis.call('GET', KEYS[i]) end
return { tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000), records }
`);
