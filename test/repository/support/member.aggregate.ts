import { Aggregate } from '@ddd-kit/id-generator';
import {
  AggregateRoot,
  InMemoryRepository,
  MongooseRepository,
  PostgresRepository,
  UniqueKey,
  type PostgresColumns,
  type StoredDocument,
  type StoredRow,
} from '@ddd-kit/repository';

/** The aggregate of the unique-key tests: a member with a unique handle and an optional unique email. */
@Aggregate({ name: 'member' })
@UniqueKey('handle', (member: Member) => member.handle)
@UniqueKey('email', (member: Member) => member.email)
export class Member extends AggregateRoot<string> {
  handle: string;
  email: string | null;

  constructor(id: string, handle: string, email: string | null = null) {
    super(id);
    this.handle = handle;
    this.email = email;
  }
}

type MemberFields = { handle: string; email: string | null };

export class MemberMongooseRepository extends MongooseRepository<string, Member, MemberFields> {
  protected toDocument(member: Member): MemberFields {
    return { handle: member.handle, email: member.email };
  }

  protected toAggregate(document: StoredDocument<string, MemberFields>): Member {
    return new Member(document._id, document.handle, document.email);
  }
}

export class MemberInMemoryRepository extends InMemoryRepository<string, Member> {}

export class MemberPostgresRepository extends PostgresRepository<string, Member, MemberFields> {
  protected readonly table = 'members';
  protected readonly columns: PostgresColumns<MemberFields> = { handle: 'text NOT NULL', email: 'text' };

  protected toRow(member: Member): MemberFields {
    return { handle: member.handle, email: member.email };
  }

  protected toAggregate(row: StoredRow<string, MemberFields>): Member {
    return new Member(row.id, row.handle, row.email);
  }
}
