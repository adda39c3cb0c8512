import type { PgPool } from './pg.interfaces.js';

const numbers = new WeakMap<object, number>();
let counted = 0;

/**
 * A pool as a message names it: `pg.Pool #2 (app@db:5432/orders)`. The number tells two pools
 * on the same database apart (the common mistake: an adapter and a repository each given one).
 */
export function describePool(pool: object): string {
  let n = numbers.get(pool);
  if (n === undefined) numbers.set(pool, (n = ++counted));
  const o = (pool as PgPool).options;
  if (o === undefined) return `pool #${n}`;
  let where = `${o.user ?? ''}${o.user ? '@' : ''}${o.host ?? 'localhost'}:${o.port ?? 5432}/${o.database ?? ''}`;
  if (o.connectionString !== undefined && o.host === undefined) {
    try {
      const url = new URL(o.connectionString);
      where = `${url.username}${url.username ? '@' : ''}${url.host}${url.pathname}`;
    } catch {
      where = 'an unparsable connection string';
    }
  }
  return `pg.Pool #${n} (${where})`;
}
