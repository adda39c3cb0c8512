import { PgSchema, type PgPool } from '@ddd-kit/core/postgres';
import type { Pool } from 'pg';
import { RepositoryConfigurationError } from '../../errors.js';
import { explainMissingTable } from './postgres-repository.rows.js';
import {
  buildStatements,
  type PostgresDeclaration,
  type PostgresRepositoryStatements,
} from './postgres-repository.statements.js';

/** What the table needs of its repository, read when first needed (after `configure`). */
export interface PostgresTableSource {
  /** The subclass's declaration: table, columns, id and version columns, id type. */
  declaration(): PostgresDeclaration;
  /** The repository's pool; throws when none is configured. */
  pool(): Pool;
  /** Whether first use may create the table (`createTables`). */
  mayCreate(): boolean;
}

/**
 * The table of one PostgresRepository: its statements, built once from the subclass's
 * declaration, and the schema step that creates the table (or checks it) before the first
 * statement. Made on first need rather than in the constructor: the declaration is the
 * subclass's, whose fields exist only once the base constructor has returned.
 */
export class PostgresRepositoryTable {
  private built?: PostgresRepositoryStatements;
  private schema?: PgSchema;
  /** The statements, once the table is known to exist (or is not this repository's to create): the hot path reads only this. */
  ready?: PostgresRepositoryStatements;

  constructor(private readonly source: PostgresTableSource) {}

  /** Builds and caches every statement from the declaration, checking each identifier. */
  statements(): PostgresRepositoryStatements {
    return (this.built ??= buildStatements(this.source.declaration()));
  }

  /** The statements, after the table exists (created, or checked, once before the first statement). */
  async ensure(): Promise<PostgresRepositoryStatements> {
    const s = this.statements();
    const schema = this.schemaStep();
    if (!schema.ready) await schema.ensure();
    this.ready = s;
    return s;
  }

  /** Creates or checks the table and every declared column (see PgSchema in @ddd-kit/core/postgres). */
  schemaStep(): PgSchema {
    return (this.schema ??= new PgSchema(this.source.pool() as PgPool, {
      owner: this.source.declaration().where,
      create: this.source.mayCreate(),
      fail: (message) => new RepositoryConfigurationError(message),
      part: '@ddd-kit/repository',
      tables: () => {
        const s = this.statements();
        const { idColumn, versionColumn } = this.source.declaration();
        return [{ name: s.table, columns: [idColumn, versionColumn, ...s.columns] }];
      },
      // The subclass's own table: a column it adds later is its team's migration (the start-up check names it).
      migrations: () => [{ name: 'create table', statements: [this.statements().createTable] }],
    }));
  }

  /** A missing table is a setup mistake: say what to do (see explainMissingTable). */
  explain(error: unknown): unknown {
    const declaration = this.source.declaration();
    return explainMissingTable(error, declaration.where, this.built?.table ?? String(declaration.table));
  }
}
