import { Inject, Injectable } from '@nestjs/common';
import { reconcileReservations, type ReconciliationReport as ReservationReport } from '@ddd-kit/prepare-key';
import {
  InjectRepository,
  InvalidAggregateIdError,
  ReadReplicaReconciler,
  type IRepository,
  type ReconciliationReport as ReadModelReport,
} from '@ddd-kit/repository';
import { UserReadModel } from '../read-model/user-read-model.js';
import { User } from '../users/user.aggregate.js';
import { UsernamePrepareKey, type UsernameIndex } from '../users/username.prepare-key.js';

export const RECONCILE_GRACE_MS = Symbol('RECONCILE_GRACE_MS');
/** Reservations younger than this are taken as requests still in flight and left alone. */
export const DEFAULT_RECONCILE_GRACE_MS = 10 * 60_000;

export interface RegistrationReconciliationReport {
  reservations: ReservationReport;
  readModel: ReadModelReport<string>;
}

/**
 * The nightly repair of what the request paths cannot guarantee on their own:
 * - a username held by no user (a crash between deleting a user and releasing its name, or
 *   between a key change and the user's update) is released;
 * - the read model gets back every user whose data-sync event was lost, and loses every user
 *   that no longer exists.
 */
@Injectable()
export class RegistrationReconciler {
  constructor(
    private readonly usernames: UsernamePrepareKey,
    @InjectRepository(User) private readonly users: IRepository<string, User>,
    private readonly readModel: UserReadModel,
    @Inject(RECONCILE_GRACE_MS) private readonly graceMs: number,
  ) {}

  async run(): Promise<RegistrationReconciliationReport> {
    const reservations = await reconcileReservations(this.usernames, (name, index) => this.holdsName(name, index));
    const readModel = await new ReadReplicaReconciler(this.users, this.readModel).run();
    return { reservations, readModel };
  }

  private async holdsName(name: string, index: UsernameIndex): Promise<boolean> {
    if (typeof index?.userId !== 'string') return false;
    let user: User | null = null;
    try {
      user = await this.users.findById(index.userId);
    } catch (err) {
      if (!(err instanceof InvalidAggregateIdError)) throw err;
    }
    if (user?.username === name) return true;
    // No user has it (yet): a registration or rename may be between its two steps.
    return typeof index.reservedAt === 'number' && Date.now() - index.reservedAt < this.graceMs;
  }
}
