// Message framing for the fault proxy: cuts each direction of a connection into whole
// protocol units (one command, one reply) so a fault can act on "the reply to the next
// EVALSHA" rather than on arbitrary bytes. Replies are matched to requests the way the
// protocol does it: in order for Redis, PostgreSQL and HTTP/1.1, by responseTo for MongoDB,
// by the reply subject for NATS.

export type Protocol = 'redis' | 'mongo' | 'postgres' | 'nats' | 'http';

/** What a fault rule can match a request on. */
export interface RequestInfo {
  /** Redis: the command's arguments (`['EVALSHA', sha, '1', key, ...]`); MongoDB: the command name and its collection; PostgreSQL: the SQL; HTTP: the method and the request target. */
  readonly command: string;
  readonly args: readonly string[];
  /** MongoDB's requestID; the request's sequence number on its connection elsewhere. */
  readonly id: number;
  /** HTTP: the request's header fields, names in lower case, repeated fields joined by `, `. */
  readonly headers?: Readonly<Record<string, string>>;
}

export interface Unit {
  readonly bytes: Buffer;
  /** Requests: what the unit asks. Replies: the request it answers, when known. */
  readonly request?: RequestInfo;
  /** MongoDB: the requestID a reply answers. */
  readonly responseTo?: number;
  /** A server message that answers no request (PostgreSQL NOTIFY, notices). */
  readonly unsolicited?: boolean;
  /** NATS: the reply subject a request asks to be answered on, and the subject a message arrives on. */
  readonly replySubject?: string;
}

/** Incremental framer of one direction of one connection. */
export interface Framer {
  /** Appends bytes and returns every unit completed by them. */
  push(chunk: Buffer): Unit[];
  /** Bytes of an incomplete unit still buffered. */
  readonly pending: number;
}

// ---------------------------------------------------------------- Redis (RESP2/RESP3)

const CRLF = 0x0d;

/** Index just past the RESP value starting at `at`, or -1 when incomplete. */
function respEnd(buf: Buffer, at: number): number {
  if (at >= buf.length) return -1;
  const type = buf[at];
  const lineEnd = buf.indexOf(CRLF, at);
  if (lineEnd < 0 || lineEnd + 1 >= buf.length) return -1;
  const afterLine = lineEnd + 2;
  const header = buf.toString('latin1', at + 1, lineEnd);
  switch (String.fromCharCode(type)) {
    case '+':
    case '-':
    case ':':
    case '_':
    case ',':
    case '#':
    case '(':
      return afterLine;
    case '$':
    case '=':
    case '!': {
      const len = Number(header);
      if (len < 0) return afterLine;
      const end = afterLine + len + 2;
      return end <= buf.length ? end : -1;
    }
    case '*':
    case '~':
    case '>':
    case '%':
    case '|': {
      let count = Number(header);
      if (count < 0) return afterLine;
      if (type === 0x25 /* % */ || type === 0x7c /* | */) count *= 2;
      let pos = afterLine;
      for (let i = 0; i < count; i++) {
        pos = respEnd(buf, pos);
        if (pos < 0) return -1;
      }
      return pos;
    }
    default:
      // An inline command (a line of words), as redis-cli may send.
      return afterLine;
  }
}

function redisArgs(unit: Buffer): string[] {
  if (unit[0] !== 0x2a /* * */) return unit.toString('latin1').trim().split(/\s+/);
  const args: string[] = [];
  let pos = unit.indexOf(CRLF) + 2;
  while (pos < unit.length) {
    const lineEnd = unit.indexOf(CRLF, pos);
    const len = Number(unit.toString('latin1', pos + 1, lineEnd));
    args.push(unit.toString('utf8', lineEnd + 2, lineEnd + 2 + len));
    pos = lineEnd + 2 + len + 2;
  }
  return args;
}

class RedisFramer implements Framer {
  private buf: Buffer = Buffer.alloc(0);
  private seq = 0;
  constructor(private readonly side: 'request' | 'reply') {}
  get pending(): number {
    return this.buf.length;
  }
  push(chunk: Buffer): Unit[] {
    this.buf = this.buf.length ? Buffer.concat([this.buf, chunk]) : chunk;
    const units: Unit[] = [];
    let start = 0;
    for (;;) {
      const end = respEnd(this.buf, start);
      if (end < 0) break;
      const bytes = this.buf.subarray(start, end);
      if (this.side === 'request') {
        const args = redisArgs(bytes);
        units.push({ bytes, request: { command: (args[0] ?? '').toUpperCase(), args, id: ++this.seq } });
      } else {
        units.push({ bytes });
      }
      start = end;
    }
    this.buf = this.buf.subarray(start);
    return units;
  }
}

// ---------------------------------------------------------------- MongoDB wire protocol

const OP_MSG = 2013;
const OP_QUERY = 2004;

/** The name of the first element of the BSON document at `at` (the command name of OP_MSG). */
function firstBsonKey(buf: Buffer, at: number): string {
  const nameStart = at + 5; // int32 length, then the element's type byte
  const nameEnd = buf.indexOf(0, nameStart);
  return nameEnd < 0 ? '' : buf.toString('utf8', nameStart, nameEnd);
}

/** The first element's value when it is a string (the collection of `insert`, `update`, `find`, …). */
function firstBsonString(buf: Buffer, at: number): string | undefined {
  if (buf[at + 4] !== 0x02) return undefined;
  const nameEnd = buf.indexOf(0, at + 5);
  const length = buf.readInt32LE(nameEnd + 1);
  return buf.toString('utf8', nameEnd + 5, nameEnd + 5 + length - 1);
}

class MongoFramer implements Framer {
  private buf: Buffer = Buffer.alloc(0);
  constructor(private readonly side: 'request' | 'reply') {}
  get pending(): number {
    return this.buf.length;
  }
  push(chunk: Buffer): Unit[] {
    this.buf = this.buf.length ? Buffer.concat([this.buf, chunk]) : chunk;
    const units: Unit[] = [];
    let start = 0;
    while (this.buf.length - start >= 16) {
      const length = this.buf.readInt32LE(start);
      if (this.buf.length - start < length) break;
      const bytes = this.buf.subarray(start, start + length);
      const requestId = bytes.readInt32LE(4);
      const responseTo = bytes.readInt32LE(8);
      const opCode = bytes.readInt32LE(12);
      if (this.side === 'request') {
        let command = '';
        let target: string | undefined;
        if (opCode === OP_MSG && bytes[20] === 0) {
          command = firstBsonKey(bytes, 21);
          target = firstBsonString(bytes, 21);
        } else if (opCode === OP_QUERY) {
          const nameEnd = bytes.indexOf(0, 20);
          command = firstBsonKey(bytes, nameEnd + 9);
        }
        units.push({
          bytes,
          request: { command, args: target === undefined ? [command] : [command, target], id: requestId },
        });
      } else {
        units.push({ bytes, responseTo });
      }
      start += length;
    }
    this.buf = this.buf.subarray(start);
    return units;
  }
}

// ---------------------------------------------------------------- PostgreSQL frontend/backend protocol

const SSL_REQUEST = 80877103;
const GSSENC_REQUEST = 80877104;

class PostgresRequestFramer implements Framer {
  private buf: Buffer = Buffer.alloc(0);
  private startup = true;
  private current: Buffer[] = [];
  private sql = '';
  private seq = 0;
  /** The text of each statement this connection prepared, by name. */
  private readonly prepared = new Map<string, string>();
  get pending(): number {
    return this.buf.length;
  }
  push(chunk: Buffer): Unit[] {
    this.buf = this.buf.length ? Buffer.concat([this.buf, chunk]) : chunk;
    const units: Unit[] = [];
    let start = 0;
    for (;;) {
      if (this.startup) {
        if (this.buf.length - start < 8) break;
        const length = this.buf.readInt32BE(start);
        if (this.buf.length - start < length) break;
        const code = this.buf.readInt32BE(start + 4);
        const bytes = this.buf.subarray(start, start + length);
        start += length;
        // SSL/GSS negotiation is answered with one byte; the startup message follows it.
        if (code !== SSL_REQUEST && code !== GSSENC_REQUEST) this.startup = false;
        units.push({
          bytes,
          request: { command: code === SSL_REQUEST ? 'SSLRequest' : 'startup', args: [], id: ++this.seq },
        });
        continue;
      }
      if (this.buf.length - start < 5) break;
      const type = String.fromCharCode(this.buf[start]);
      const length = this.buf.readInt32BE(start + 1) + 1;
      if (this.buf.length - start < length) break;
      const message = this.buf.subarray(start, start + length);
      start += length;
      this.current.push(message);
      if (type === 'Q') this.sql = message.toString('utf8', 5, length - 1);
      if (type === 'P') {
        const nameEnd = message.indexOf(0, 5);
        this.sql = message.toString('utf8', nameEnd + 1, message.indexOf(0, nameEnd + 1));
        if (nameEnd > 5) this.prepared.set(message.toString('utf8', 5, nameEnd), this.sql);
      }
      // A prepared statement runs again by name alone (Bind, no Parse): it matches on its text.
      if (type === 'B' && this.sql === '') {
        const portalEnd = message.indexOf(0, 5);
        const name = message.toString('utf8', portalEnd + 1, message.indexOf(0, portalEnd + 1));
        this.sql = this.prepared.get(name) ?? '';
      }
      // A unit ends where the server will answer with ReadyForQuery (Sync, simple Query), or
      // with nothing at all (Terminate); a password message is answered by the server too.
      if (type === 'S' || type === 'Q' || type === 'X' || type === 'p') {
        const bytes = Buffer.concat(this.current);
        units.push({
          bytes,
          request: { command: type === 'X' ? 'Terminate' : this.sql, args: [this.sql], id: ++this.seq },
        });
        this.current = [];
        this.sql = '';
      }
    }
    this.buf = this.buf.subarray(start);
    return units;
  }
}

class PostgresReplyFramer implements Framer {
  private buf: Buffer = Buffer.alloc(0);
  private current: Buffer[] = [];
  private sslAnswerDue = false;
  get pending(): number {
    return this.buf.length + this.current.reduce((n, b) => n + b.length, 0);
  }
  /** Called by the proxy when the client sent an SSLRequest: the answer is one untyped byte. */
  expectSslAnswer(): void {
    this.sslAnswerDue = true;
  }
  push(chunk: Buffer): Unit[] {
    this.buf = this.buf.length ? Buffer.concat([this.buf, chunk]) : chunk;
    const units: Unit[] = [];
    let start = 0;
    for (;;) {
      if (this.sslAnswerDue) {
        if (this.buf.length - start < 1) break;
        units.push({ bytes: this.buf.subarray(start, start + 1) });
        start += 1;
        this.sslAnswerDue = false;
        continue;
      }
      if (this.buf.length - start < 5) break;
      const type = String.fromCharCode(this.buf[start]);
      const length = this.buf.readInt32BE(start + 1) + 1;
      if (this.buf.length - start < length) break;
      const message = this.buf.subarray(start, start + length);
      start += length;
      // Asynchronous messages between units (NOTIFY, notices) travel as units of their own.
      if (this.current.length === 0 && (type === 'A' || type === 'N')) {
        units.push({ bytes: message, unsolicited: true });
        continue;
      }
      this.current.push(message);
      const authRequest = type === 'R' && message.readInt32BE(5) !== 0;
      if (type === 'Z' || authRequest) {
        units.push({ bytes: Buffer.concat(this.current) });
        this.current = [];
      }
    }
    this.buf = this.buf.subarray(start);
    return units;
  }
}

// ---------------------------------------------------------------- NATS client protocol

/**
 * NATS is a text protocol of CRLF-terminated lines; PUB/HPUB (client) and MSG/HMSG (server)
 * carry a payload of a declared size after their line. A request is a PUB/HPUB with a reply
 * subject (a JetStream publish, a request); its reply is the MSG/HMSG that arrives on that
 * subject. Every other line (CONNECT, SUB, PING, INFO, +OK...) answers nothing the proxy
 * tracks: it passes as it is.
 */
class NatsFramer implements Framer {
  private buf: Buffer = Buffer.alloc(0);
  private seq = 0;
  constructor(private readonly side: 'request' | 'reply') {}
  get pending(): number {
    return this.buf.length;
  }
  push(chunk: Buffer): Unit[] {
    this.buf = this.buf.length ? Buffer.concat([this.buf, chunk]) : chunk;
    const units: Unit[] = [];
    let start = 0;
    for (;;) {
      const lineEnd = this.buf.indexOf('\r\n', start, 'latin1');
      if (lineEnd < 0) break;
      const words = this.buf.toString('latin1', start, lineEnd).trim().split(/\s+/);
      const op = words[0].toUpperCase();
      let end = lineEnd + 2;
      let subject: string | undefined;
      let reply: string | undefined;
      if (op === 'PUB' || op === 'HPUB' || op === 'MSG' || op === 'HMSG') {
        // PUB subj [reply] size · HPUB subj [reply] hsize tsize · MSG subj sid [reply] size · HMSG subj sid [reply] hsize tsize
        const sizes = op.startsWith('H') ? 2 : 1;
        const fixed = op.endsWith('MSG') ? 2 : 1;
        const size = Number(words[words.length - 1]);
        subject = words[1];
        if (words.length > fixed + sizes + 1) reply = words[fixed + 1];
        end = lineEnd + 2 + size + 2;
        if (end > this.buf.length) break;
      }
      const bytes = this.buf.subarray(start, end);
      start = end;
      if (this.side === 'request') {
        const args = op === 'PUB' || op === 'HPUB' ? [subject ?? '', ...(reply ? [reply] : [])] : words.slice(1);
        units.push({
          bytes,
          request: { command: op, args, id: ++this.seq },
          replySubject: op === 'PUB' || op === 'HPUB' ? reply : undefined,
        });
      } else {
        units.push({
          bytes,
          replySubject: op === 'MSG' || op === 'HMSG' ? subject : undefined,
          unsolicited: op !== 'MSG' && op !== 'HMSG',
        });
      }
    }
    this.buf = this.buf.subarray(start);
    return units;
  }
}

// ---------------------------------------------------------------- HTTP/1.1

/**
 * HTTP/1.1 messages on a persistent connection: a head up to the empty line, then a body of
 * `Content-Length` bytes or of chunks (`Transfer-Encoding: chunked`, trailers included). A
 * reply answers the oldest request not answered yet (RFC 9112 §9.3); a 1xx interim reply
 * answers none. The reply framer learns each request's method from the request framer, since
 * a reply to HEAD has no body however it is framed. A reply without a length ends when the
 * connection does: its head is the unit, and its body passes on as it comes.
 */
interface HttpHead {
  /** Index just past the empty line. */
  end: number;
  startLine: string;
  headers: Record<string, string>;
}

function httpHead(buf: Buffer, at: number): HttpHead | undefined {
  const end = buf.indexOf('\r\n\r\n', at, 'latin1');
  if (end < 0) return undefined;
  const [startLine, ...lines] = buf.toString('latin1', at, end).split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    const name = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    headers[name] = name in headers ? `${headers[name]}, ${value}` : value;
  }
  return { end: end + 4, startLine, headers };
}

/** Index just past a chunked body starting at `at` (its trailers included), or -1 when incomplete. */
function chunkedEnd(buf: Buffer, at: number): number {
  let pos = at;
  for (;;) {
    const lineEnd = buf.indexOf('\r\n', pos, 'latin1');
    if (lineEnd < 0) return -1;
    const size = parseInt(buf.toString('latin1', pos, lineEnd).split(';')[0].trim(), 16);
    if (Number.isNaN(size)) throw new Error('HTTP: a chunk size that is not hexadecimal');
    if (size === 0) {
      // Trailer fields, then the empty line.
      const trailersEnd = buf.indexOf('\r\n\r\n', lineEnd, 'latin1');
      return trailersEnd < 0 ? -1 : trailersEnd + 4;
    }
    pos = lineEnd + 2 + size + 2;
    if (pos > buf.length) return -1;
  }
}

/** Index just past the body that follows `head`, `-1` when incomplete, `Infinity` when it ends with the connection. */
function httpBodyEnd(buf: Buffer, head: HttpHead, bodyless: boolean): number {
  if (bodyless) return head.end;
  if (/(^|,)\s*chunked\s*$/i.test(head.headers['transfer-encoding'] ?? '')) return chunkedEnd(buf, head.end);
  const length = head.headers['content-length'];
  if (length !== undefined) {
    const end = head.end + Number(length.split(',')[0]);
    return end <= buf.length ? end : -1;
  }
  return Number.POSITIVE_INFINITY;
}

class HttpRequestFramer implements Framer {
  private buf: Buffer = Buffer.alloc(0);
  private seq = 0;
  constructor(private readonly methods: string[]) {}
  get pending(): number {
    return this.buf.length;
  }
  push(chunk: Buffer): Unit[] {
    this.buf = this.buf.length ? Buffer.concat([this.buf, chunk]) : chunk;
    const units: Unit[] = [];
    let start = 0;
    for (;;) {
      const head = httpHead(this.buf, start);
      if (head === undefined) break;
      // A request without Content-Length or chunked coding has no body (RFC 9112 §6.3).
      const end = httpBodyEnd(
        this.buf,
        head,
        !('content-length' in head.headers || 'transfer-encoding' in head.headers),
      );
      if (end < 0) break;
      const [method = '', target = ''] = head.startLine.split(' ');
      this.methods.push(method.toUpperCase());
      units.push({
        bytes: this.buf.subarray(start, end),
        request: { command: method.toUpperCase(), args: [target], id: ++this.seq, headers: head.headers },
      });
      start = end;
    }
    this.buf = this.buf.subarray(start);
    return units;
  }
}

class HttpReplyFramer implements Framer {
  private buf: Buffer = Buffer.alloc(0);
  /** A reply whose body ends with the connection is being passed on. */
  private untilClose = false;
  constructor(private readonly methods: string[]) {}
  get pending(): number {
    return this.buf.length;
  }
  push(chunk: Buffer): Unit[] {
    if (this.untilClose) return [{ bytes: chunk, unsolicited: true }];
    this.buf = this.buf.length ? Buffer.concat([this.buf, chunk]) : chunk;
    const units: Unit[] = [];
    let start = 0;
    for (;;) {
      const head = httpHead(this.buf, start);
      if (head === undefined) break;
      const status = Number(head.startLine.split(' ')[1]);
      const interim = status >= 100 && status < 200;
      const bodyless = interim || status === 204 || status === 304 || this.methods[0] === 'HEAD';
      const end = httpBodyEnd(this.buf, head, bodyless);
      if (end < 0) break;
      if (!interim) this.methods.shift();
      if (end === Number.POSITIVE_INFINITY) {
        units.push({ bytes: this.buf.subarray(start, head.end) });
        if (head.end < this.buf.length) units.push({ bytes: this.buf.subarray(head.end), unsolicited: true });
        this.untilClose = true;
        start = this.buf.length;
        break;
      }
      units.push({ bytes: this.buf.subarray(start, end), unsolicited: interim });
      start = end;
    }
    this.buf = this.buf.subarray(start);
    return units;
  }
}

export function createFramers(protocol: Protocol): { request: Framer; reply: Framer } {
  switch (protocol) {
    case 'redis':
      return { request: new RedisFramer('request'), reply: new RedisFramer('reply') };
    case 'mongo':
      return { request: new MongoFramer('request'), reply: new MongoFramer('reply') };
    case 'postgres':
      return { request: new PostgresRequestFramer(), reply: new PostgresReplyFramer() };
    case 'nats':
      return { request: new NatsFramer('request'), reply: new NatsFramer('reply') };
    case 'http': {
      // The methods of the requests not answered yet, oldest first.
      const methods: string[] = [];
      return { request: new HttpRequestFramer(methods), reply: new HttpReplyFramer(methods) };
    }
  }
}

export function isPostgresReplyFramer(framer: Framer): framer is PostgresReplyFramer {
  return framer instanceof PostgresReplyFramer;
}
