import http from 'node:http';

export interface RawResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
  /** The body parsed as JSON, or undefined when it is not JSON. */
  json: unknown;
}

export interface RawRequest {
  method: string;
  /** Sent as it is: percent-encode what must reach the app decoded (`%0A`, `%00`). */
  path: string;
  /** A value given as an array is sent as that many header lines. */
  headers?: Record<string, string | string[]>;
  /** Sent as it is, as JSON unless `content-type` says otherwise. */
  body?: string;
}

/**
 * One request exactly as given, over node:http: repeated and empty headers, bodies that are not
 * JSON, paths that supertest would rewrite. Never rejects on an HTTP status.
 */
export function rawRequest(baseUrl: string, req: RawRequest): Promise<RawResponse> {
  const url = new URL(baseUrl);
  const headers: Record<string, string | string[]> = { ...req.headers };
  if (req.body !== undefined) {
    if (!Object.keys(headers).some((h) => h.toLowerCase() === 'content-type'))
      headers['content-type'] = 'application/json';
    headers['content-length'] = String(Buffer.byteLength(req.body));
  }
  return new Promise((resolve, reject) => {
    const outgoing = http.request(
      { host: url.hostname, port: url.port, method: req.method, path: req.path, headers, agent: false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('error', reject);
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let json: unknown;
          try {
            json = JSON.parse(text);
          } catch {
            json = undefined;
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json });
        });
      },
    );
    outgoing.setTimeout(20_000, () => outgoing.destroy(new Error(`${req.method} ${req.path}: no answer in 20 s`)));
    outgoing.on('error', reject);
    outgoing.end(req.body);
  });
}
