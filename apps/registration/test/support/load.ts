import { mulberry32 } from '../../../../test/support/fault-proxy/index.js';
import { sleep } from '../../../../test/support/wait.js';

/** How a load run went: requests by method and status ('no-reply' when the call itself failed). */
export interface LoadReport {
  requests: number;
  statuses: Record<string, number>;
}

interface Known {
  version: number;
  secret?: string;
}

/**
 * Random registrations, renames and deletions from `clients` concurrent clients against
 * `urls()` until `until()` says stop. Names come from a small pool so that requests contend;
 * each client's choices follow from the seed. Errors are part of the load: they are counted.
 */
export async function runLoad(options: {
  urls: () => string[];
  seed: number;
  clients: number;
  names: string[];
  until: () => boolean;
}): Promise<LoadReport> {
  const known = new Map<string, Known>();
  const report: LoadReport = { requests: 0, statuses: {} };

  const call = async (
    url: string,
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ) => {
    report.requests++;
    try {
      const response = await fetch(`${url}${path}`, {
        method,
        headers: { 'content-type': 'application/json', ...headers },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(10_000),
      });
      const key = `${method} ${response.status}`;
      report.statuses[key] = (report.statuses[key] ?? 0) + 1;
      const text = await response.text();
      return { status: response.status, body: text ? JSON.parse(text) : undefined };
    } catch {
      const key = `${method} no-reply`;
      report.statuses[key] = (report.statuses[key] ?? 0) + 1;
      return { status: 0, body: undefined };
    }
  };

  const client = async (c: number) => {
    const pick = mulberry32(options.seed * 1_000 + c);
    while (!options.until()) {
      const urls = options.urls();
      const url = urls[Math.floor(pick() * urls.length)];
      const mine = [...known.entries()];
      const roll = pick();
      const name = options.names[Math.floor(pick() * options.names.length)];
      if (roll < 0.45 || mine.length === 0) {
        const r = await call(url, 'POST', '/users', { username: name });
        if (r.status === 201) known.set(r.body.id, { version: r.body.version, secret: r.body.secret });
        if (r.status === 0) await sleep(50); // an instance is down
        continue;
      }
      const [id, user] = mine[Math.floor(pick() * mine.length)];
      const auth: Record<string, string> = user.secret ? { authorization: `Bearer ${user.secret}` } : {};
      if (roll < 0.8) {
        const r = await call(
          url,
          'PATCH',
          `/users/${id}/username`,
          { username: name },
          { ...auth, 'if-match': String(user.version) },
        );
        if (r.status === 200) user.version = r.body.version;
        else if (r.status === 412 || r.status === 503 || r.status === 0) {
          const fresh = await call(url, 'GET', `/users/${id}`);
          if (fresh.status === 200) user.version = fresh.body.version;
          else if (fresh.status === 404) known.delete(id);
        } else if (r.status === 404) known.delete(id);
      } else {
        const r = await call(url, 'DELETE', `/users/${id}`, undefined, auth);
        if (r.status === 204 || r.status === 404) known.delete(id);
      }
    }
  };
  await Promise.all(Array.from({ length: options.clients }, (_, c) => client(c)));
  return report;
}
