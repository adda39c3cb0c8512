import pg from 'pg';
import { postgresSchema } from '../support/servers.js';
import { CounterPostgresRepository } from './support/counter.aggregate.js';
import { describeReconciliationContract } from './support/reconciliation-contract.js';
import {
  describeRepositoryContract,
  type CounterRepository,
  type CounterRepositoryClass,
  type RepositoryContractTarget,
} from '@ddd-kit/repository/testing';

// Every suite in a schema of its own (dropped at the end), every repository on its own table,
// created by the repository on first use.
const onPostgres = async (): Promise<RepositoryContractTarget> => {
  const schema = await postgresSchema('repository_contract');
  const pool = new pg.Pool({ connectionString: schema.url });
  let tables = 0;
  return {
    Repository: CounterPostgresRepository as unknown as CounterRepositoryClass,
    options: () => ({ pool, table: `counters_${++tables}` }),
    raw: async (repository: CounterRepository) => {
      const table = (repository as unknown as { qualifiedTable: string }).qualifiedTable;
      return (await pool.query(`SELECT * FROM ${table} ORDER BY id`)).rows;
    },
    close: async () => {
      try {
        await pool.end();
      } finally {
        await schema.drop();
      }
    },
  };
};

describeRepositoryContract('PostgresRepository', onPostgres, { numericIds: 'refused' });
describeReconciliationContract('PostgresRepository', onPostgres);
