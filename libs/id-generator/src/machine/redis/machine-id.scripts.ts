// Lua for RedisMachineIdDistributor: each step is one atomic script. Keys, all in one hash
// slot per namespace (Redis Cluster):
//   KEYS[1] owners     hash  machineId -> instanceId               (held IDs)
//   KEYS[2] instances  hash  instanceId -> machineId
//   KEYS[3] timestamps hash  machineId -> floor for its next holder: the latest timestamp its
//                            holders reported or were started after (kept after release)
//   KEYS[4] deadlines  zset  machineId scored by its holder's deadline, by the SERVER's clock (ms):
//                            the last distribute/guard + the holder's own safeGuardMs
//   KEYS[5] released   zset  machineIds released by revert, scored by themselves (lowest first)
//   KEYS[6] meta       hash  next (first never-used ID), machineBits
//   KEYS[7] bounds     hash  machineId -> the holder's deadline by ITS OWN clock (epoch ms): no ID
//                            it issues carries this millisecond or a later one
//   KEYS[8] op         string, one per distribute/revert call (expires): the reply of a call
//                            already run, for a resend of the same call (lost reply)
//
// Who decides what: the holder's own safeGuardMs sets its deadline (a newcomer's setting plays
// no part), the server's clock (TIME) decides when that deadline has passed, and the holder's
// clock bounds the timestamps a newcomer must start after.

import { luaScript } from '@ddd-kit/core/redis';

/** How long the reply of a distribute or revert is kept for a resend of the same call. */
export const OP_TTL_MS = 600_000;

const PRELUDE = `
local owners, instances, stamps, deadlines, released, meta, bounds = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7]
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local function num(v) return tonumber(v or '0') end
local function stamp(id) return num(redis.call('HGET', stamps, id)) end
local function bound(id) return num(redis.call('HGET', bounds, id)) end
`;

/**
 * KEYS: the seven above and the op key. ARGV: instanceId, machineBits, safeGuardMs (the
 * holder's), until (the holder's deadline by its own clock).
 * Reply: {machineId, lastTimestamp, how} with how 0 = already held by this instance, 1 = a
 * released ID, 2 = never used, 3 = reclaimed past its holder's deadline; {-1} when none is
 * free; {-2, bits} when the namespace was set up with other machine bits.
 */
export const DISTRIBUTE_SCRIPT = luaScript(`${PRELUDE}
local op = KEYS[8]
local instance = ARGV[1]
local bits = tonumber(ARGV[2])
local safeGuard = tonumber(ARGV[3])
local untilMs = tonumber(ARGV[4])
local storedBits = redis.call('HGET', meta, 'machineBits')
if storedBits and tonumber(storedBits) ~= bits then return {-2, tonumber(storedBits)} end
if not storedBits then redis.call('HSET', meta, 'machineBits', bits) end

-- This very call ran before (its reply was lost and the client resent it): the same answer,
-- as long as the ID is still this instance's.
local prior = redis.call('GET', op)
if prior then
  local id, floor, how = string.match(prior, '^(%d+):(%d+):(%d+)$')
  if redis.call('HGET', owners, id) == instance then return {tonumber(id), tonumber(floor), tonumber(how)} end
end

local function take(id, floor, how)
  redis.call('HSET', owners, id, instance)
  redis.call('HSET', instances, instance, id)
  redis.call('ZADD', deadlines, now + safeGuard, id)
  redis.call('HSET', bounds, id, untilMs)
  -- The floor stays with the ID: whoever holds it later starts after it too.
  if floor > stamp(id) then redis.call('HSET', stamps, id, floor) end
  redis.call('SET', op, id .. ':' .. floor .. ':' .. how, 'PX', ${OP_TTL_MS})
  return {tonumber(id), floor, how}
end

local held = redis.call('HGET', instances, instance)
if held then
  -- The same instance ID in another call: a restart under a stable instance ID. The earlier
  -- incarnation issued IDs below its bound, and (being restarted) stopped before now.
  return take(held, math.max(stamp(held), math.min(bound(held), now)), 0)
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

-- Past its holder's own deadline (server clock): the holder stopped issuing IDs before it, all
-- of them below its bound (its clock). Start after that.
local expired = redis.call('ZRANGEBYSCORE', deadlines, '-inf', '(' .. now, 'LIMIT', 0, 1)
if expired[1] then
  local id = expired[1]
  local previous = redis.call('HGET', owners, id)
  if previous then redis.call('HDEL', instances, previous) end
  return take(id, math.max(stamp(id), bound(id)), 3)
end
return {-1}
`);

/**
 * ARGV: instanceId, machineId, lastTimestamp, safeGuardMs (the holder's), until (the holder's
 * deadline by its own clock). Reply 1 = still held (deadline moved on), 0 = lost. Only ever
 * moves values forward, so a resend changes nothing.
 */
export const GUARD_SCRIPT = luaScript(`${PRELUDE}
local instance, id, last = ARGV[1], ARGV[2], tonumber(ARGV[3])
local safeGuard, untilMs = tonumber(ARGV[4]), tonumber(ARGV[5])
if redis.call('HGET', owners, id) ~= instance then return 0 end
local deadline = now + safeGuard
if deadline > num(redis.call('ZSCORE', deadlines, id)) then redis.call('ZADD', deadlines, deadline, id) end
if untilMs > bound(id) then redis.call('HSET', bounds, id, ARGV[5]) end
if last > stamp(id) then redis.call('HSET', stamps, id, ARGV[3]) end
return 1
`);

/**
 * KEYS: the seven above and the op key. ARGV: instanceId, machineId, lastTimestamp.
 * Reply 1 = released by this call (also when a resend of it finds the release done),
 * 0 = not held by this instance.
 */
export const REVERT_SCRIPT = luaScript(`${PRELUDE}
local op = KEYS[8]
local instance, id, last = ARGV[1], ARGV[2], tonumber(ARGV[3])
if redis.call('HGET', owners, id) ~= instance then
  if redis.call('GET', op) == id then return 1 end
  return 0
end
redis.call('HDEL', owners, id)
redis.call('HDEL', instances, instance)
redis.call('ZREM', deadlines, id)
redis.call('HDEL', bounds, id)
if last > stamp(id) then redis.call('HSET', stamps, id, ARGV[3]) end
redis.call('ZADD', released, tonumber(id), id)
redis.call('SET', op, id, 'PX', ${OP_TTL_MS})
return 1
`);
