import { MongooseRepository, type StoredDocument } from '@ddd-kit/repository';
import { User } from './user.aggregate.js';

interface UserDocument {
  username: string;
  secretHash: string;
}

/** Users as `{ _id, username, secretHash, version }` documents; the version field and locking are the base class's. */
export class UserMongooseRepository extends MongooseRepository<string, User, UserDocument> {
  protected toDocument(user: User): UserDocument {
    return { username: user.username, secretHash: user.secretHash };
  }

  protected toAggregate(document: StoredDocument<string, UserDocument>): User {
    return User.register(document._id, document.username, document.secretHash);
  }
}
