import type { RepositoryOutboxOptions } from '@ddd-kit/repository';
import type { OutboxClaim } from '@ddd-kit/repository/outbox';
import type { AppConfig } from '../config/app-config.js';

/**
 * Durable data-sync events on a shared repository: each write stores its events with the user
 * (the outbox table in the same transaction on PostgreSQL, inside the user's document on
 * MongoDB) and RepositoryModule's relay feeds the read model from there, at least once, so a
 * crash between the write and the projector delays an event and never loses it. In memory there
 * is nothing durable to gain: events are delivered in process, before the request answers.
 *
 * The lease: a claim of an instance killed mid-delivery is taken over after it (the projector
 * is one statement, far shorter). How often the relay polls is the store's: see backends/.
 */
export function outboxOptions(
  config: AppConfig,
  { pollIntervalMs }: { pollIntervalMs: number },
): RepositoryOutboxOptions {
  return {
    relay: config.outboxRelay ?? true,
    leaseMs: 10_000,
    pollIntervalMs,
    ...(config.outboxParkAfterClaim === true ? { onClaimed: parkForever } : {}),
  };
}

/** The crash test's seam: the relay says it claimed, then never delivers (the test kills the process). */
function parkForever(claims: readonly OutboxClaim[]): Promise<never> {
  process.stdout.write(`outbox-relay parked after claiming ${claims.length} instance(s)\n`);
  return new Promise<never>(() => undefined);
}
