/**
 * A store server's clock as this process last observed it. Backends whose server decides expiry
 * (Redis scripts with TIME, PostgreSQL with clock_timestamp()) make `get` filter expiry with the
 * same clock: every read reports the server time and refreshes the offset. Accurate to within a
 * round trip, and shared by every key of a factory (one server, or one Cluster whose nodes keep
 * their clocks in step, as NTP does).
 */
export class ServerClock {
  private offsetMs = 0;

  observe(serverNowMs: number): void {
    this.offsetMs = serverNowMs - Date.now();
  }

  now(): number {
    return Date.now() + this.offsetMs;
  }
}
