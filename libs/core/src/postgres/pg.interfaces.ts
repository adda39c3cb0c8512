// What the ddd-kit PostgreSQL parts need of node-postgres, structurally: their public types
// never require `pg`'s own (a user without pg installed still type-checks).

/** What a statement answers. */
export interface PgResult<R = any> {
  rows: R[];
  rowCount: number | null;
}

/** A statement as node-postgres takes it; with a `name`, a prepared one (see preparedStatement). */
export interface PgQueryConfig {
  readonly name?: string;
  readonly text: string;
  readonly values?: unknown[];
}

/** Anything that runs a statement: a pg.Pool (autocommit), a pool's client, a Client. */
export interface PgQueryable {
  query(text: string | PgQueryConfig, values?: unknown[]): Promise<PgResult>;
}

/** A connection checked out of a pool (`pool.connect()`). */
export interface PgPoolClient extends PgQueryable {
  /** `release(true)` (or an error) destroys the connection instead of returning it to the pool. */
  release(destroy?: boolean | Error): void;
  on(event: 'error', listener: (error: Error) => void): unknown;
  removeListener(event: 'error', listener: (error: Error) => void): unknown;
}

/** A node-postgres `pg.Pool`. */
export interface PgPool extends PgQueryable {
  connect(): Promise<PgPoolClient>;
  /** What pg.Pool keeps of its configuration (read for messages only). */
  readonly options?: {
    host?: string;
    port?: number;
    database?: string;
    user?: string;
    connectionString?: string;
    max?: number;
  };
}
