import { expect, it } from '@jest/globals';
import { LEASE, type OutboxStoreContractContext } from './contract-context.js';

/**
 * Arguments every store refuses before anything changes.
 * (Cases of describeOutboxStoreContract, see ../outbox-store.contract.ts.)
 */
export function describeBadInputCases(context: OutboxStoreContractContext): void {
  const { writeVersions, claim } = context;
  it('bad input is refused before anything changes', async () => {
    const { store } = context.target();
    await writeVersions('a', 1);
    const now = Date.now();
    for (const bad of [
      { owner: '', limit: 1, leaseMs: 1, now },
      { owner: 'r', limit: 0, leaseMs: 1, now },
      { owner: 'r', limit: 1.5, leaseMs: 1, now },
      { owner: 'r', limit: 1, leaseMs: 0, now },
      { owner: 'r', limit: 1, leaseMs: 1, now: Number.NaN },
      { owner: { $ne: null } as unknown as string, limit: 1, leaseMs: 1, now },
    ]) {
      await expect(store.claim(bad)).rejects.toThrow();
    }
    const [c] = await claim('r', now);
    const id = c.events[0].eventId;
    await expect(store.fail('r', id, { error: 'x', retryAt: now, maxAttempts: 0, now })).rejects.toThrow();
    await expect(store.fail('r', id, { error: 'x', retryAt: Number.NaN, maxAttempts: 1, now })).rejects.toThrow();
    await expect(store.ack('', [id])).rejects.toThrow();
    await expect(store.ack('r', [{ $ne: null } as unknown as string])).rejects.toThrow();
    await expect(store.listDeadLetters({ limit: 0 })).rejects.toThrow();
    await expect(store.replayDeadLetters([id], Number.NaN)).rejects.toThrow();
    await expect(store.renew('', [id], now + LEASE)).rejects.toThrow();
    await expect(store.renew('r', [id], Number.NaN)).rejects.toThrow();
    await expect(store.renew('r', [{ $ne: null } as unknown as string], now + LEASE)).rejects.toThrow();
    expect(await store.status(now)).toMatchObject({ pending: 1, deadLetters: 0 });
    expect(await store.ack('r', [id])).toBe(1);
  });
}
