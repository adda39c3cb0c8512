import { Injectable } from '@nestjs/common';
import {
  Aggregate,
  AggregateRoot,
  InjectRepository,
  UniqueKey,
  type IRepository,
} from '@ddd-kit/repository';

// The username is a unique key: the repository reserves it around every write.
@Aggregate({ name: 'user' })
@UniqueKey('username', (user: User) => user.username)
export class User extends AggregateRoot<string> {
  constructor(
    id: string | undefined,
    public username: string,
  ) {
    super(id);
  }
}

@Injectable()
export class AppService {
  constructor(
    @InjectRepository(User) private readonly users: IRepository<string, User>,
  ) {}

  async register(username: string): Promise<string> {
    const user = new User(undefined, username);
    await this.users.insert(user); // reserves the name, then inserts; the id comes from IdGeneratorModule
    return user.id;
  }
}
