/**
 * The Redis server's clock as this process last observed it. Scripts decide expiry with the
 * server's TIME; `get` filters expiry in TypeScript, through `now()`, so `now()` follows the
 * server too: every read reports the server time and refreshes the offset. Accurate to within
 * a round trip, and shared by every key of a factory (one server, or one Cluster whose nodes
 * keep their clocks in step, as NTP does).
 */
export class RedisServerClock {
  private offsetMs = 0;

  observe(serverNowMs: number): void {
    this.offsetMs = serverNowMs - Date.now();
  }

  now(): number {
    return Date.now() + this.offsetMs;
  }
}
