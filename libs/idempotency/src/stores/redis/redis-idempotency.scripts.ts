import { luaScript } from '@ddd-kit/core/redis';

// A record is one hash: s = 'p' (in progress) or 'd' (done), f = the fingerprint digest,
// t = the token of the run that holds it, r = the result (done only). Redis drops it itself
// (PEXPIRE): an in-progress record when its lease ends, a done one when its ttl does. Each
// script answers a resend of its own command (same token) as the first run did.

/** ARGV: fingerprint, token, leaseMs. Answers {'a'} acquired, {'c'} conflict, {'p'} in progress, {'d', result}. */
export const BEGIN = luaScript(`
local r = redis.call('HMGET', KEYS[1], 's', 'f', 't', 'r')
if not r[1] then
  redis.call('HSET', KEYS[1], 's', 'p', 'f', ARGV[1], 't', ARGV[2])
  redis.call('PEXPIRE', KEYS[1], ARGV[3])
  return {'a'}
end
if r[2] ~= ARGV[1] then return {'c'} end
if r[1] == 'p' then
  if r[3] == ARGV[2] then return {'a'} end
  return {'p'}
end
return {'d', r[4]}
`);

/** ARGV: token, result, ttlMs. 1 when the record is (now or already) done under this token; 0 when the token lost it. */
export const COMPLETE = luaScript(`
local r = redis.call('HMGET', KEYS[1], 's', 't')
if r[2] ~= ARGV[1] then return 0 end
if r[1] == 'd' then return 1 end
redis.call('HSET', KEYS[1], 's', 'd', 'r', ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1
`);

/** ARGV: token. Deletes the record when it is in progress under this token. */
export const RELEASE = luaScript(`
local r = redis.call('HMGET', KEYS[1], 's', 't')
if r[1] == 'p' and r[2] == ARGV[1] then redis.call('DEL', KEYS[1]) return 1 end
return 0
`);
