import type { Logger } from '@nestjs/common';
import { errorText } from './outbox-arguments.js';
import { OutboxLane, type OutboxLaneContext } from './outbox-lane.js';
import type { OutboxClaim, OutboxStore } from './outbox.interfaces.js';

/** What the lanes need of their relay. */
export interface OutboxLanesHost {
  readonly logger: Logger;
  /** Wakes the relay's loop: it claims again. */
  wake(): void;
  /** Wake-ups so far: a lane compares the count at its end with the count at its start. */
  wakes(): number;
}

/**
 * The lanes one OutboxRelay runs, one per claimed instance of each store (see OutboxLane). A
 * claim for an instance whose lane still runs goes to that lane, so one lane alone delivers an
 * instance; every lane is tracked until it ends, for the relay's batch size and its shutdown.
 */
export class OutboxLanes {
  private readonly byStore = new Map<OutboxStore, Map<string, OutboxLane>>();
  /** Every lane running (their ends), for shutdown to wait on. */
  private readonly inFlight = new Set<Promise<void>>();

  constructor(
    private readonly context: OutboxLaneContext,
    private readonly host: OutboxLanesHost,
  ) {}

  /** The lanes running, over every store. */
  get active(): number {
    let n = 0;
    for (const lanes of this.byStore.values()) n += lanes.size;
    return n;
  }

  /**
   * Delivers `claim` in a lane. `detached`: the lane logs its own errors and this resolves at
   * once (the loop's lanes); otherwise this resolves when the lane ends and rejects with its
   * error (runOnce's). `handedOff`: a claim a store handed over as its write committed.
   */
  open(store: OutboxStore, claim: OutboxClaim, detached: boolean, handedOff = false): Promise<void> {
    let lanes = this.byStore.get(store);
    if (lanes === undefined) this.byStore.set(store, (lanes = new Map()));
    const key = instanceKey(claim);
    const running = lanes.get(key);
    const wakesBefore = this.host.wakes();
    // The store hands an instance out again only when the lease lapsed; the lane still running
    // here must stay the only one delivering it.
    const done =
      running !== undefined
        ? // What it gave back was released after the lane's own wake-up (its store calls run in
          // turn): nothing else would claim it before the next poll.
          running.adopt(claim).then((gaveBack) => {
            if (gaveBack) this.host.wake();
          })
        : (() => {
            const lane = new OutboxLane(this.context, store, claim);
            lanes.set(key, lane);
            return lane.run().finally(() => {
              lanes.delete(key);
              // Its instance may have more now, or lanes were all busy: claim again. A write
              // handed off needs that only when new events were signalled meanwhile (a write
              // to its instance while it ran was stored unclaimed and woke this relay).
              if (!handedOff || this.host.wakes() !== wakesBefore) this.host.wake();
            });
          })();
    this.inFlight.add(done);
    const tracked = done.finally(() => this.inFlight.delete(done));
    if (!detached) return tracked;
    tracked.catch((error: unknown) =>
      this.host.logger.error(
        `Delivering ${claim.aggregate} ${JSON.stringify(claim.aggregateId)} stopped on a store error (${errorText(error)}); its claim expires with its lease`,
      ),
    );
    return Promise.resolve();
  }

  /** Resolves once every lane running now has ended, however it ended. */
  async ended(): Promise<void> {
    await Promise.all([...this.inFlight].map((lane) => lane.catch(() => undefined)));
  }
}

function instanceKey(claim: OutboxClaim): string {
  return `${claim.aggregate}\u0000${typeof claim.aggregateId}\u0000${String(claim.aggregateId)}`;
}
