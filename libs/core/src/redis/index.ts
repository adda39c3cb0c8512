// `@ddd-kit/core/redis`: the Redis client a ddd-kit module opens and closes for its users
// (`redis: { url }`); ioredis is loaded only when one is opened.
export {
  closeRedis,
  connectionProblem,
  DEFAULT_COMMAND_TIMEOUT_MS,
  describeRedis,
  openRedis,
  warnWithoutCommandTimeout,
  type RedisConnectionOptions,
} from './redis-connection.js';
export { luaScript, runScript, runScriptOnKeys, runScriptThen, type LuaScript } from './lua-script.js';
export { CLUSTER_SLOTS, clusterSlot, slotTag } from './cluster-slot.js';
