import type { Redis } from 'ioredis';

/**
 * Loads every script a scripts module exports (each export with a `lua` source) into one node,
 * so that an armed fault meets the command that runs a script, not a NOSCRIPT answer that the
 * client would follow with EVAL.
 */
export async function loadScripts(node: Redis, scripts: Record<string, unknown>): Promise<void> {
  for (const script of Object.values(scripts)) {
    if (typeof script === 'object' && script !== null && 'lua' in script && typeof script.lua === 'string')
      await node.script('LOAD', script.lua);
  }
}
