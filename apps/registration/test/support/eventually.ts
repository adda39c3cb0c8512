import { expect } from '@jest/globals';

/**
 * Reads until the value read equals `expected` (jest's `toEqual`), and resolves it. On a shared
 * repository the read model is fed by the outbox relay, after the write has answered: a read
 * right after a write may not show it yet, but must converge. Polls (a few ms apart, backing off
 * to 100 ms) rather than sleeping a fixed time; gives up only after `withinMs`, a bound far above
 * any delivery so a relay that never delivers fails with the last value read, not a hang.
 *
 * An expectation the read model already meets before the write (an empty list) proves nothing:
 * wait first for something only the write's event can produce.
 */
export async function eventually<T>(read: () => Promise<T>, expected: unknown, withinMs = 30_000): Promise<T> {
  const deadline = Date.now() + withinMs;
  for (let pause = 2; ; pause = Math.min(pause * 2, 100)) {
    const value = await read();
    try {
      expect(value).toEqual(expected);
      return value;
    } catch (error) {
      if (Date.now() >= deadline) throw error;
    }
    await new Promise((resolve) => setTimeout(resolve, pause));
  }
}
