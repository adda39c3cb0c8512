import {
  MongooseRepository,
  PostgresRepository,
  type PostgresColumns,
  type StoredDocument,
  type StoredRow,
} from '@ddd-kit/repository';
import { User } from './user.aggregate.js';

interface UserDocument {
  username: string;
  secretHash: string;
}

/**
 * Users as `{ _id, username, secretHash, version }` documents; the version field and locking are
 * the base class's. With RepositoryModule's outbox on, each write carries its data-sync events
 * in the document (the `_outbox…` fields) and the module's relay delivers them.
 */
export class UserMongooseRepository extends MongooseRepository<string, User, UserDocument> {
  protected toDocument(user: User): UserDocument {
    return { username: user.username, secretHash: user.secretHash };
  }

  protected toAggregate(document: StoredDocument<string, UserDocument>): User {
    return User.register(document._id, document.username, document.secretHash);
  }
}

interface UserRow {
  username: string;
  secret_hash: string;
}

/** Users as rows `(id, version, username, secret_hash)` of the table `users`; id, version and locking are the base class's. */
export class UserPostgresRepository extends PostgresRepository<string, User, UserRow> {
  protected readonly table = 'users';
  protected readonly columns: PostgresColumns<UserRow> = { username: 'text NOT NULL', secret_hash: 'text NOT NULL' };

  protected toRow(user: User): UserRow {
    return { username: user.username, secret_hash: user.secretHash };
  }

  protected toAggregate(row: StoredRow<string, UserRow>): User {
    return User.register(row.id, row.username, row.secret_hash);
  }
}
