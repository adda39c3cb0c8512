import { Inject, Injectable } from '@nestjs/common';
import type { SweepProgress } from '@ddd-kit/core';
import {
  AbstractRepository,
  InjectRepository,
  reconcileUniqueKeys,
  type IRepository,
  type UniqueKeysReconciliationReport,
} from '@ddd-kit/repository';
import {
  ReadReplicaReconciler,
  type ReconciliationReport as ReadModelReport,
} from '@ddd-kit/repository/reconciliation';
import { UserReadModel } from '../read-model/user-read-model.js';
import { User } from '../users/user.aggregate.js';

export const RECONCILE_GRACE_MS = Symbol('RECONCILE_GRACE_MS');
/** Reservations younger than this are taken as requests still in flight and left alone. */
export const DEFAULT_RECONCILE_GRACE_MS = 10 * 60_000;

export interface RegistrationReconciliationReport {
  usernames: UniqueKeysReconciliationReport;
  readModel: ReadModelReport<string>;
}

/**
 * The repair of what the request paths leave behind after a crash or an unknown outcome,
 * both ways:
 * - a username reserved by no user holding it is released; a user whose name has no
 *   reservation gets it back; users sharing a name are reported;
 * - the read model gets back every user whose data-sync event was lost, and loses every user
 *   that no longer exists.
 */
@Injectable()
export class RegistrationReconciler {
  constructor(
    @InjectRepository(User) private readonly users: IRepository<string, User>,
    private readonly readModel: UserReadModel,
    @Inject(RECONCILE_GRACE_MS) private readonly graceMs: number,
  ) {}

  /** `onProgress` hears how the usernames' sweep goes, every few seconds (it runs long on millions of users). */
  async run(onProgress?: (progress: SweepProgress) => void): Promise<RegistrationReconciliationReport> {
    const usernames = await reconcileUniqueKeys(this.users as AbstractRepository<string, User>, {
      graceMs: this.graceMs,
      onProgress,
    });
    const readModel = await new ReadReplicaReconciler(this.users, this.readModel).run();
    return { usernames, readModel };
  }
}
