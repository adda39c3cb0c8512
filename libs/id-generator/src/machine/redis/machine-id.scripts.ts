// Lua for RedisMachineIdDistributor: each step is one atomic script. Keys, all in one hash
// slot per namespace (Redis Cluster):
//   KEYS[1] owners      hash  machineId -> instanceId              (held IDs)
//   KEYS[2] instances   hash  instanceId -> machineId
//   KEYS[3] timestamps  hash  machineId -> last timestamp reported (kept after release)
//   KEYS[4] heartbeats  zset  machineId scored by the server time (ms) of its last heartbeat
//   KEYS[5] released    zset  machineIds released by revert, scored by themselves (lowest first)
//   KEYS[6] meta        hash  next (first never-used ID), machineBits
// Time comes from the server (TIME), so silence is measured on one clock whatever the clients'.

export const MACHINE_ID_KEY_COUNT = 6;

const PRELUDE = `
local owners, instances, stamps, beats, released, meta = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local function stamp(id) return tonumber(redis.call('HGET', stamps, id) or '0') end
`;

/**
 * ARGV: instanceId, machineBits, safeGuardMs.
 * Reply: {machineId, lastTimestamp, how} with how 0 = already held by this instance, 1 = a
 * released ID, 2 = never used, 3 = reclaimed from a silent instance; {-1} when none is free;
 * {-2, bits} when the namespace was set up with other machine bits.
 */
export const DISTRIBUTE_SCRIPT = `${PRELUDE}
local instance = ARGV[1]
local bits = tonumber(ARGV[2])
local safeGuard = tonumber(ARGV[3])
local storedBits = redis.call('HGET', meta, 'machineBits')
if storedBits and tonumber(storedBits) ~= bits then return {-2, tonumber(storedBits)} end
if not storedBits then redis.call('HSET', meta, 'machineBits', bits) end

local function take(id, last, how)
  redis.call('HSET', owners, id, instance)
  redis.call('HSET', instances, instance, id)
  redis.call('ZADD', beats, now, id)
  return {tonumber(id), last, how}
end

local held = redis.call('HGET', instances, instance)
if held then
  -- The same instance ID again (a restart under a stable ID). Its earlier incarnation issued
  -- IDs until it stopped, at the latest when its lease ran out (last report + safeGuard), and
  -- it stopped before now.
  local beat = tonumber(redis.call('ZSCORE', beats, held) or '0')
  local last = stamp(held)
  return take(held, math.max(last, math.min(math.max(last, beat) + safeGuard, now)), 0)
end

local free = redis.call('ZRANGE', released, 0, 0)
if free[1] then
  redis.call('ZREM', released, free[1])
  return take(free[1], stamp(free[1]), 1)
end

local nextId = tonumber(redis.call('HGET', meta, 'next') or '0')
if nextId < 2 ^ bits then
  redis.call('HSET', meta, 'next', nextId + 1)
  return take(tostring(nextId), stamp(tostring(nextId)), 2)
end

-- Silent for longer than safeGuard: its holder stopped issuing IDs when its lease ran out,
-- which was before its last report + safeGuard (on its own clock): start after that.
local silent = redis.call('ZRANGEBYSCORE', beats, '-inf', '(' .. (now - safeGuard), 'WITHSCORES', 'LIMIT', 0, 1)
if silent[1] then
  local id = silent[1]
  local previous = redis.call('HGET', owners, id)
  if previous then redis.call('HDEL', instances, previous) end
  return take(id, math.max(stamp(id), tonumber(silent[2])) + safeGuard, 3)
end
return {-1}
`;

/** ARGV: instanceId, machineId, lastTimestamp. Reply 1 = still held (heartbeat recorded), 0 = lost. */
export const GUARD_SCRIPT = `${PRELUDE}
local instance, id, last = ARGV[1], ARGV[2], tonumber(ARGV[3])
if redis.call('HGET', owners, id) ~= instance then return 0 end
redis.call('ZADD', beats, now, id)
if last > stamp(id) then redis.call('HSET', stamps, id, ARGV[3]) end
return 1
`;

/** ARGV: instanceId, machineId, lastTimestamp. Reply 1 = released, 0 = not held by this instance. */
export const REVERT_SCRIPT = `${PRELUDE}
local instance, id, last = ARGV[1], ARGV[2], tonumber(ARGV[3])
if redis.call('HGET', owners, id) ~= instance then return 0 end
redis.call('HDEL', owners, id)
redis.call('HDEL', instances, instance)
redis.call('ZREM', beats, id)
if last > stamp(id) then redis.call('HSET', stamps, id, ARGV[3]) end
redis.call('ZADD', released, tonumber(id), id)
return 1
`;
