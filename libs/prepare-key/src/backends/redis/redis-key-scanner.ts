import type { Cluster, Redis } from 'ioredis';
import { escapeGlob } from './redis-prepare-key.utils.js';

export interface KeyScanPage {
  /** Matching keys, without the client's own ioredis `keyPrefix`. */
  keys: string[];
  /** Absent once every node has been scanned to its end. */
  next?: string;
}

/** SCAN calls one page may make before it returns (possibly empty) so a sparse match still yields progress. */
const MAX_SCANS_PER_PAGE = 16;
/** SCAN's COUNT is a hint of slots to visit, not of matches: never ask for too few. */
const MIN_SCAN_COUNT = 100;

/**
 * Lists the keys that start with a prefix page by page (SCAN MATCH), on one Redis or on
 * every master of a Cluster in turn. A cursor is `<node> <SCAN cursor>` (`<node>` is
 * host:port, empty on a single node), so a sweep resumes on the right node. SCAN's guarantee carries over: a key
 * present from start to end of a sweep is listed; one written or deleted meanwhile may or may
 * not be, and a key may be listed twice while Redis resizes its table. If the Cluster's
 * masters change mid-sweep, the sweep continues with the next node in address order.
 */
export class RedisKeyScanner {
  private readonly keyPrefix: string;

  constructor(private readonly client: Redis | Cluster) {
    // SCAN patterns and replies are not prefixed by ioredis, unlike key arguments.
    this.keyPrefix = (client.options as { keyPrefix?: string }).keyPrefix ?? '';
  }

  /** One page of the keys that start with `prefix`. */
  async page(prefix: string, cursor: string | undefined, pageSize: number): Promise<KeyScanPage> {
    const match = `${escapeGlob(this.keyPrefix + prefix)}*`;
    const nodes = await this.nodes();
    let { index, position } = locate(cursor, nodes);
    const keys = new Set<string>();
    const count = Math.max(pageSize, MIN_SCAN_COUNT);
    for (let scans = 0; index < nodes.length && keys.size < pageSize && scans < MAX_SCANS_PER_PAGE; scans++) {
      const [next, batch] = await nodes[index].client.scan(position, 'MATCH', match, 'COUNT', count);
      for (const key of batch) keys.add(key.slice(this.keyPrefix.length));
      if (next === '0') {
        index++;
        position = '0';
      } else {
        position = next;
      }
    }
    return { keys: [...keys], next: index < nodes.length ? `${nodes[index].id} ${position}` : undefined };
  }

  private async nodes(): Promise<ScanNode[]> {
    if (!this.client.isCluster) return [{ id: '', client: this.client as Redis }];
    const cluster = this.client as Cluster;
    // A Cluster client knows its masters only once connected: a first command connects it.
    if (cluster.status !== 'ready') await cluster.ping();
    return cluster
      .nodes('master')
      .map((client) => ({ id: `${client.options.host}:${client.options.port}`, client }))
      .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }
}

interface ScanNode {
  id: string;
  client: Redis;
}

function locate(cursor: string | undefined, nodes: ScanNode[]): { index: number; position: string } {
  if (cursor === undefined) return { index: 0, position: '0' };
  const space = cursor.lastIndexOf(' ');
  const id = cursor.slice(0, space);
  const index = nodes.findIndex((node) => node.id === id);
  if (index >= 0) return { index, position: cursor.slice(space + 1) };
  // That node left the Cluster: go on with the next one in address order.
  const after = nodes.findIndex((node) => node.id > id);
  return { index: after < 0 ? nodes.length : after, position: '0' };
}
