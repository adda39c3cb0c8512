import { RepositoryError } from './repository.error.js';

/**
 * Another aggregate holds a value of one of this aggregate's unique keys. Nothing was written,
 * and every value the failed write had just reserved was released again.
 * `name` is the unique key's name (not the class's): tell the error apart with `instanceof`.
 */
export class UniqueKeyViolationError extends RepositoryError {
  override readonly code = 'UNIQUE_KEY_VIOLATION';

  constructor(
    /** The unique key's name (the PrepareKey name), e.g. 'username'. */
    override readonly name: string,
    /** The value that is taken. */
    readonly key: string,
    /**
     * Who holds it, as the reservation says: for code that needs it, never in the message (for
     * a username or an e-mail, the message would tell anyone who holds a name).
     */
    readonly holder?: { aggregate: string; id: unknown },
  ) {
    super(`the ${name} '${key}' is already taken`);
  }
}
