/** Base class of every error this library throws, so callers can tell them from driver errors. */
export class RepositoryError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = new.target.name;
  }
}
