/** Who asks for a machine ID, and for how many bits. */
export interface MachineIdRequest {
  /** IDs are unique within a namespace (one per ID space, e.g. per application). */
  namespace: string;
  /** Machine IDs range over [0, 2^machineBits). */
  machineBits: number;
  /** This process; unique among live instances (default: host name and PID). */
  instanceId: string;
}

/** A machine ID, and the millisecond after which its new holder may issue IDs. */
export interface MachineIdDistribution {
  machineId: number;
  /** The latest timestamp a previous holder may have used (0 when none); generate only after it. */
  lastTimestamp: number;
}

/** A held machine ID, with the latest timestamp its holder has used (or the clock, if later). */
export interface MachineIdState extends MachineIdRequest {
  machineId: number;
  lastTimestamp: number;
}

/**
 * Hands out machine IDs. An abstract class so it can serve as a Nest token; implement all three
 * steps. `safeGuardMs`/`guardIntervalMs` are set by distributors whose IDs expire without a
 * heartbeat: the holder must `guard` at that interval and stop issuing IDs before `safeGuardMs`
 * of silence (MachineIdHolder does both). Such a distributor must let the holder own its lease:
 * record at every distribute and guard the deadline this instance's own `safeGuardMs` gives,
 * reclaim an ID only past the deadline its holder recorded (never by the newcomer's setting),
 * and answer right or fail under a lost reply or a resend (see the Redis and PostgreSQL ones).
 */
export abstract class MachineIdDistributor {
  /** How long a distribution stays the holder's without a successful guard; undefined: for ever. */
  readonly safeGuardMs?: number;
  /** How often a holder should guard; undefined: never needed. */
  readonly guardIntervalMs?: number;

  /** Gives `instanceId` a machine ID no live instance of the namespace holds. */
  abstract distribute(request: MachineIdRequest): Promise<MachineIdDistribution>;

  /** Heartbeat: keeps the ID held and records `lastTimestamp`. Throws MachineIdLostError when the ID was taken over. */
  abstract guard(state: MachineIdState): Promise<void>;

  /** Releases the ID for reuse after `lastTimestamp`; false when this instance no longer held it. */
  abstract revert(state: MachineIdState): Promise<boolean>;

  /** Closes what the distributor opened of its own (never a client it was given); the holder calls it after its release. */
  async close(): Promise<void> {}
}

export function isMachineIdDistributor(value: unknown): value is MachineIdDistributor {
  if (value instanceof MachineIdDistributor) return true;
  const v = value as Partial<MachineIdDistributor> | null;
  return (
    !!v &&
    typeof v === 'object' &&
    typeof v.distribute === 'function' &&
    typeof v.guard === 'function' &&
    typeof v.revert === 'function'
  );
}
