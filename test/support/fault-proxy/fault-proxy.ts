import net from 'node:net';
import {
  createFramers,
  isPostgresReplyFramer,
  type Framer,
  type Protocol,
  type RequestInfo,
  type Unit,
} from './framing.js';

export type { Protocol, RequestInfo } from './framing.js';

/**
 * A TCP proxy in front of a real server that injects the faults a network and a busy server
 * produce, at the granularity of whole protocol messages, so a test can say "the reply to the
 * next EVALSHA is lost and the connection cut" and know exactly what the server did:
 *
 *   dropReply({ then: 'cut' })   the server acts, its reply never arrives, the connection is
 *                                cut (ioredis then reconnects and resends by default)
 *   dropReply({ then: 'hold' })  the server acts, the connection goes silent: the client times out
 *   duplicateRequest()           the request reaches the server twice; the client sees only the
 *                                second reply (a lost reply followed by a resend, whatever the driver)
 *   delayReply({ ms })           the reply (and everything after it) arrives late, in order
 *   holdReply()                  the server acts, its reply (and everything after it) waits
 *                                until the client sends its next request on that connection
 *                                (or the test releases it): a reply that comes after the
 *                                client gave up, however slow the machine, with no fixed delay
 *   dropRequest()                the request never reaches the server; the connection stalls
 *   resetMidReply()              half the reply arrives, then a TCP reset
 *   resetAll()                   every open connection is reset now
 *   blackhole() / heal()         nothing passes either way until healed (a pause or partition)
 *   random({ seed, rate })       seeded random faults on replies, for chaos tests
 *
 * Messages are never reordered or partially lost inside a live connection: TCP does not do
 * that, and a client could not be blamed for what follows.
 *
 * In front of an HTTP server (`protocol: 'http'`) the same faults act on whole HTTP/1.1
 * exchanges: `dropReply()` forwards the request, lets the app answer it in full, and cuts the
 * client's connection instead of passing the response on (the response lost after the app
 * acted). Requests match on their method (`'POST'`), on `METHOD target` (`/^POST \/users$/`),
 * or on a predicate that can read `headers`.
 */
export class FaultProxy {
  private server!: net.Server;
  private readonly links = new Set<Link>();
  private rules: Rule[] = [];
  private randomMode: RandomMode | undefined;
  private holding = false;
  private readonly heldCallbacks: Array<() => void> = [];
  /** How many faults of each kind were injected. */
  readonly stats: Record<FaultKind, number> = {
    'drop-reply-cut': 0,
    'drop-reply-hold': 0,
    duplicate: 0,
    delay: 0,
    hold: 0,
    'drop-request': 0,
    'reset-mid-reply': 0,
    reset: 0,
  };
  port = 0;
  readonly host = '127.0.0.1';

  private constructor(
    readonly protocol: Protocol,
    readonly target: { host: string; port: number },
  ) {}

  static async start(options: {
    protocol: Protocol;
    target: { host: string; port: number } | string;
  }): Promise<FaultProxy> {
    const target = typeof options.target === 'string' ? parseHostPort(options.target) : options.target;
    const proxy = new FaultProxy(options.protocol, target);
    await proxy.listen();
    return proxy;
  }

  /** `host:port` of the proxy. */
  get address(): string {
    return `${this.host}:${this.port}`;
  }

  /** The number of client connections open now. */
  get openConnections(): number {
    return this.links.size;
  }

  /** The total of injected faults. */
  get injected(): number {
    return Object.values(this.stats).reduce((a, b) => a + b, 0);
  }

  // ------------------------------------------------------------------ scripted faults

  /** The reply to the nth matching request is lost after the server acted; then the connection is cut, or goes silent. */
  dropReply(options: Matching & { then?: 'cut' | 'hold' } = {}): FaultHandle {
    return this.addRule(options, options.then === 'hold' ? 'drop-reply-hold' : 'drop-reply-cut', {});
  }

  /** The nth matching request reaches the server twice; the first reply is lost. */
  duplicateRequest(options: Matching = {}): FaultHandle {
    return this.addRule(options, 'duplicate', {});
  }

  /** The reply to the nth matching request (and all that follows it on that connection) arrives `ms` late. */
  delayReply(options: Matching & { ms: number }): FaultHandle {
    return this.addRule(options, 'delay', { ms: options.ms });
  }

  /**
   * The reply to the nth matching request (and all that follows it on that connection) waits
   * until the client sends another request on that connection, or `release()` / `cancel()`:
   * the late reply of a timeout, let through once the caller has given up (a client sends its
   * next command after the timeout it met), however long that took. `{ untilReleased: true }`
   * holds it through later requests too.
   */
  holdReply(options: Matching & { untilReleased?: boolean } = {}): FaultHandle & { release(): void } {
    const gate: Gate = { open: false, onNextRequest: !options.untilReleased, waiters: [] };
    const { fired, cancel } = this.addRule(options, 'hold', { gate });
    // Cancelling ends the fault: the rule goes, and a reply it held passes.
    return { fired, release: () => openGate(gate), cancel: () => (cancel(), openGate(gate)) };
  }

  /** The nth matching request never reaches the server; its connection forwards nothing more and is cut after `cutAfterMs` (never by default). */
  dropRequest(options: Matching & { cutAfterMs?: number } = {}): FaultHandle {
    return this.addRule(options, 'drop-request', { ms: options.cutAfterMs });
  }

  /** Half the reply to the nth matching request arrives, then the connection is reset. */
  resetMidReply(options: Matching = {}): FaultHandle {
    return this.addRule(options, 'reset-mid-reply', {});
  }

  /** Resets every open connection now. */
  resetAll(): void {
    for (const link of [...this.links]) {
      this.stats.reset++;
      link.reset();
    }
  }

  /** Nothing passes in either direction, new connections included, until `heal()`. */
  blackhole(): void {
    this.holding = true;
  }

  /** Ends a blackhole: held bytes flow on in order (`{ reset: true }`: every connection is reset instead). */
  heal(options: { reset?: boolean } = {}): void {
    this.holding = false;
    if (options.reset) this.resetAll();
    for (const release of this.heldCallbacks.splice(0)) release();
  }

  /**
   * Seeded random faults on replies: each reply to a matching request suffers one with
   * probability `rate` (default: lost and cut, delayed up to `maxDelayMs`, duplicated, reset
   * halfway). The same seed and the same traffic give the same faults.
   */
  random(options: Matching & { seed: number; rate: number; kinds?: RandomKind[]; maxDelayMs?: number }): void {
    this.randomMode = {
      next: mulberry32(options.seed),
      rate: options.rate,
      kinds: options.kinds ?? ['drop-reply-cut', 'delay', 'duplicate', 'reset-mid-reply'],
      maxDelayMs: options.maxDelayMs ?? 200,
      match: options.match,
    };
  }

  /** Removes every rule and random mode (a blackhole stays until heal). */
  clear(): void {
    this.rules = [];
    this.randomMode = undefined;
  }

  async close(): Promise<void> {
    this.clear();
    this.heal();
    for (const link of [...this.links]) link.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  // ------------------------------------------------------------------ internals

  private addRule(options: Matching, kind: FaultKind, params: { ms?: number; gate?: Gate }): FaultHandle {
    let resolve!: (info: RequestInfo) => void;
    const fired = new Promise<RequestInfo>((r) => (resolve = r));
    const rule: Rule = {
      kind,
      match: toMatcher(options.match),
      remaining: options.nth ?? 1,
      ms: params.ms,
      gate: params.gate,
      resolve,
    };
    this.rules.push(rule);
    return {
      fired,
      cancel: () => {
        this.rules = this.rules.filter((r) => r !== rule);
      },
    };
  }

  /** The scripted or random fault for a request, decided when the request passes. */
  decide(request: RequestInfo): Decision | undefined {
    for (const rule of this.rules) {
      if (!rule.match(request)) continue;
      if (--rule.remaining > 0) continue;
      this.rules = this.rules.filter((r) => r !== rule);
      this.stats[rule.kind]++;
      rule.resolve(request);
      return { kind: rule.kind, ms: rule.ms, gate: rule.gate };
    }
    const random = this.randomMode;
    if (random && (random.match === undefined || toMatcher(random.match)(request)) && random.next() < random.rate) {
      const kind = random.kinds[Math.floor(random.next() * random.kinds.length)];
      this.stats[kind]++;
      return { kind, ms: kind === 'delay' ? 1 + Math.floor(random.next() * random.maxDelayMs) : undefined };
    }
    return undefined;
  }

  /** Runs `go` now, or when the blackhole heals. */
  whenFlowing(go: () => void): void {
    if (this.holding) this.heldCallbacks.push(go);
    else go();
  }

  get isHolding(): boolean {
    return this.holding;
  }

  forget(link: Link): void {
    this.links.delete(link);
  }

  private listen(): Promise<void> {
    this.server = net.createServer((client) => {
      const link = new Link(this, client);
      this.links.add(link);
    });
    return new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(0, this.host, () => {
        this.port = (this.server.address() as net.AddressInfo).port;
        resolve();
      });
    });
  }
}

type FaultKind =
  'drop-reply-cut' | 'drop-reply-hold' | 'duplicate' | 'delay' | 'hold' | 'drop-request' | 'reset-mid-reply' | 'reset';

/** Held replies pass once the gate opens. */
interface Gate {
  open: boolean;
  /** The client's next request on the connection opens it. */
  onNextRequest: boolean;
  waiters: Array<() => void>;
}

function openGate(gate: Gate): void {
  gate.open = true;
  for (const wake of gate.waiters.splice(0)) wake();
}
type RandomKind = 'drop-reply-cut' | 'drop-reply-hold' | 'delay' | 'duplicate' | 'reset-mid-reply';

export interface Matching {
  /** Which requests count: a predicate, a command name (case-insensitive), or a RegExp on the command and arguments. */
  match?: ((request: RequestInfo) => boolean) | string | RegExp;
  /** The fault hits the nth matching request (default the first). */
  nth?: number;
}

export interface FaultHandle {
  /** Resolves with the request once the fault has been applied to it. */
  readonly fired: Promise<RequestInfo>;
  cancel(): void;
}

interface Rule {
  kind: FaultKind;
  match: (request: RequestInfo) => boolean;
  remaining: number;
  ms?: number;
  gate?: Gate;
  resolve: (info: RequestInfo) => void;
}

interface RandomMode {
  next: () => number;
  rate: number;
  kinds: RandomKind[];
  maxDelayMs: number;
  match?: Matching['match'];
}

interface Decision {
  kind: FaultKind;
  ms?: number;
  gate?: Gate;
}

/** A request in flight on one connection, waiting for its reply. */
interface Expected {
  request: RequestInfo;
  decision?: Decision;
  /** A duplicated request's first copy: its reply is swallowed. */
  swallow?: boolean;
  /** NATS: the subject its reply arrives on. */
  replySubject?: string;
}

function toMatcher(match: Matching['match']): (request: RequestInfo) => boolean {
  if (match === undefined) return () => true;
  if (typeof match === 'function') return match;
  if (typeof match === 'string') {
    const name = match.toUpperCase();
    return (r) => r.command.toUpperCase() === name;
  }
  return (r) => match.test([r.command, ...r.args].join(' '));
}

/** One client connection and its upstream connection. */
class Link {
  private readonly upstream: net.Socket;
  private readonly framers: { request: Framer; reply: Framer };
  private readonly expected: Expected[] = [];
  private readonly byMongoId = new Map<number, Expected[]>();
  private readonly byReplySubject = new Map<string, Expected[]>();
  /** Replies waiting to be written to the client, in order. */
  private readonly outbox: Array<{ bytes: Buffer; at: number; gate?: Gate; action?: 'cut' | 'hold' | 'reset-mid' }> =
    [];
  private pumpTimer: NodeJS.Timeout | undefined;
  private requestsStalled = false;
  private repliesStalled = false;
  /** The held reply at the head of the outbox, waiting for its release. */
  private gate: Gate | undefined;
  private closed = false;

  constructor(
    private readonly proxy: FaultProxy,
    private readonly client: net.Socket,
  ) {
    this.framers = createFramers(proxy.protocol);
    this.upstream = net.connect(proxy.target.port, proxy.target.host);
    this.upstream.setNoDelay(true);
    client.setNoDelay(true);
    client.on('data', (chunk: Buffer) => proxy.whenFlowing(() => this.fromClient(chunk)));
    this.upstream.on('data', (chunk: Buffer) => proxy.whenFlowing(() => this.fromServer(chunk)));
    for (const socket of [client, this.upstream]) {
      socket.on('error', () => this.destroy());
      socket.on('close', () => this.destroy());
    }
  }

  private fromClient(chunk: Buffer): void {
    if (this.closed || this.requestsStalled) return;
    for (const unit of this.framers.request.push(chunk)) {
      if (this.requestsStalled) return;
      const request = unit.request!;
      // A request after a held reply: the client has given up waiting for it.
      if (this.gate?.onNextRequest) openGate(this.gate);
      if (request.command === 'SSLRequest' && isPostgresReplyFramer(this.framers.reply))
        this.framers.reply.expectSslAnswer();
      // NATS: only a request with a reply subject is answered; the rest passes untouched.
      const tracked = this.proxy.protocol !== 'nats' || unit.replySubject !== undefined;
      if (!tracked) {
        this.upstream.write(unit.bytes);
        continue;
      }
      const decision = request.command === 'startup' ? undefined : this.proxy.decide(request);
      if (decision?.kind === 'drop-request') {
        this.requestsStalled = true;
        if (decision.ms !== undefined) setTimeout(() => this.destroy(), decision.ms).unref();
        return;
      }
      if (decision?.kind === 'duplicate') {
        this.expect({ request, swallow: true, replySubject: unit.replySubject });
        this.upstream.write(unit.bytes);
      }
      this.expect({
        request,
        decision: decision?.kind === 'duplicate' ? undefined : decision,
        replySubject: unit.replySubject,
      });
      if (request.command !== 'Terminate') this.upstream.write(unit.bytes);
    }
  }

  private expect(entry: Expected): void {
    if (entry.request.command === 'Terminate') return;
    if (this.proxy.protocol === 'mongo') {
      const list = this.byMongoId.get(entry.request.id) ?? [];
      list.push(entry);
      this.byMongoId.set(entry.request.id, list);
    } else if (this.proxy.protocol === 'nats') {
      const list = this.byReplySubject.get(entry.replySubject!) ?? [];
      list.push(entry);
      this.byReplySubject.set(entry.replySubject!, list);
    } else {
      this.expected.push(entry);
    }
  }

  private answered(unit: Unit): Expected | undefined {
    if (unit.unsolicited) return undefined;
    if (this.proxy.protocol === 'mongo') {
      const list = this.byMongoId.get(unit.responseTo!);
      const entry = list?.shift();
      if (list && list.length === 0) this.byMongoId.delete(unit.responseTo!);
      return entry;
    }
    if (this.proxy.protocol === 'nats') {
      const list = unit.replySubject === undefined ? undefined : this.byReplySubject.get(unit.replySubject);
      const entry = list?.shift();
      if (list && list.length === 0) this.byReplySubject.delete(unit.replySubject!);
      return entry;
    }
    return this.expected.shift();
  }

  private fromServer(chunk: Buffer): void {
    if (this.closed) return;
    for (const unit of this.framers.reply.push(chunk)) {
      const entry = this.answered(unit);
      if (entry?.swallow) continue;
      const now = Date.now();
      const last = this.outbox.length ? this.outbox[this.outbox.length - 1].at : now;
      switch (entry?.decision?.kind) {
        case 'drop-reply-cut':
          this.outbox.push({ bytes: Buffer.alloc(0), at: last, action: 'cut' });
          break;
        case 'drop-reply-hold':
          this.outbox.push({ bytes: Buffer.alloc(0), at: last, action: 'hold' });
          break;
        case 'delay':
          this.outbox.push({ bytes: unit.bytes, at: Math.max(last, now + (entry.decision.ms ?? 0)) });
          break;
        case 'hold':
          this.outbox.push({ bytes: unit.bytes, at: last, gate: entry.decision.gate });
          break;
        case 'reset-mid-reply':
          this.outbox.push({ bytes: unit.bytes, at: last, action: 'reset-mid' });
          break;
        default:
          this.outbox.push({ bytes: unit.bytes, at: last });
      }
    }
    this.pump();
  }

  private pump(): void {
    if (this.pumpTimer !== undefined || this.gate !== undefined || this.closed || this.repliesStalled) return;
    while (this.outbox.length > 0) {
      const head = this.outbox[0];
      if (head.gate && !head.gate.open) {
        const gate = (this.gate = head.gate);
        gate.waiters.push(() => {
          if (this.gate === gate) this.gate = undefined;
          this.pump();
        });
        return;
      }
      const wait = head.at - Date.now();
      if (wait > 0) {
        this.pumpTimer = setTimeout(() => {
          this.pumpTimer = undefined;
          this.pump();
        }, wait);
        return;
      }
      this.outbox.shift();
      if (head.action === 'cut') return this.destroy();
      if (head.action === 'hold') {
        this.repliesStalled = true;
        return;
      }
      if (head.action === 'reset-mid') {
        this.client.write(head.bytes.subarray(0, Math.max(1, head.bytes.length >> 1)), () => this.reset());
        this.closed = true;
        return;
      }
      this.client.write(head.bytes);
    }
  }

  /** A TCP reset on both sides. */
  reset(): void {
    this.closed = true;
    this.client.resetAndDestroy();
    this.upstream.resetAndDestroy();
    this.proxy.forget(this);
  }

  destroy(): void {
    if (this.pumpTimer !== undefined) clearTimeout(this.pumpTimer);
    this.closed = true;
    this.client.destroy();
    this.upstream.destroy();
    this.proxy.forget(this);
  }
}

function parseHostPort(value: string): { host: string; port: number } {
  const url = value.includes('://') ? new URL(value) : new URL(`tcp://${value}`);
  return { host: url.hostname, port: Number(url.port) };
}

/** A small seeded PRNG, so a chaos run's faults follow from its seed. */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
