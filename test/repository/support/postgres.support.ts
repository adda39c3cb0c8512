// Helpers of the PostgreSQL repository tests: a pool whose statements are recorded on their
// way to the server (a real pool, observed, never a stand-in).
import type pg from 'pg';

export interface SentStatement {
  text: string;
  values?: unknown[];
  /** Set for a prepared statement (sent by name). */
  name?: string;
}

/** `pool` seen through a proxy that records every statement sent through it or its clients. */
export function observedPool(pool: pg.Pool): { pool: pg.Pool; sent: SentStatement[] } {
  const sent: SentStatement[] = [];
  const recording =
    (target: { query: (...args: any[]) => Promise<unknown> }) =>
    (text: string | pg.QueryConfig, values?: unknown[]) => {
      if (typeof text === 'string') sent.push(values === undefined ? { text } : { text, values });
      else
        sent.push({ text: text.text, ...(text.values === undefined ? {} : { values: text.values }), name: text.name });
      return target.query(text, values);
    };
  const observeClient = (client: pg.PoolClient): pg.PoolClient =>
    new Proxy(client, {
      get(target, key) {
        if (key === 'query') return recording(target);
        const value = Reflect.get(target, key, target);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
  const proxy = new Proxy(pool, {
    get(target, key) {
      if (key === 'query') return recording(target);
      if (key === 'connect') return async () => observeClient(await target.connect());
      const value = Reflect.get(target, key, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  return { pool: proxy, sent };
}
