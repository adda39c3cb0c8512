/** 6666-06-06T00:00:00Z: the ttlAt of a reservation that never expires. Compare against the constant, never a copy of the number. */
export const TTL_FOREVER: number = Date.UTC(6666, 5, 6);

/**
 * A value together with the absolute time (epoch milliseconds) at which its reservation
 * expires. Constructing one never throws: a bad ttlAt is rejected by the operation that
 * receives it, so callers always get a rejected promise rather than a synchronous throw.
 */
export class PreparedValue<V> {
  constructor(
    readonly value: V,
    readonly ttlAt: number,
  ) {}

  get isForever(): boolean {
    return this.ttlAt >= TTL_FOREVER;
  }

  /** Expired once the clock has reached ttlAt. */
  isExpired(now: number = Date.now()): boolean {
    return this.ttlAt <= now;
  }
}

export function toForever<V>(value: V): PreparedValue<V> {
  return new PreparedValue(value, TTL_FOREVER);
}

export function toTtlAt<V>(value: V, ttlAt: number): PreparedValue<V> {
  return new PreparedValue(value, ttlAt);
}
