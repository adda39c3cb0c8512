// The ORMs a user would pick instead of @ddd-kit/repository for a version-checked update on
// PostgreSQL, each loading a row and writing it back only if its version is unchanged:
//  - MikroORM: an entity with `version: true` (what `@Property({ version: true })` declares),
//    loaded in a fork of the EntityManager and flushed: its UPDATE … WHERE id AND version (in a
//    transaction of its own, as flush does) throws OptimisticLockError when nothing matched.
//  - TypeORM: an entity with a version column (`@VersionColumn`), loaded with findOneBy and
//    written with the query builder's UPDATE … WHERE id = :id AND version = :version, checked on
//    `affected`. Its `save()` does not check the version (UPDATE … WHERE id only: a stale write
//    silently wins), so the bench measures the checked form, and shows what save() does with a
//    stale entity, untimed.
// Each side runs on a table of the same DDL as the repository's (the caller passes it), one row
// per writer (ORM_DEBUG=1 prints what each ORM sends), and checks every update: the version it left is the loaded one plus one, and at
// the end each row's count and version are what the side counted (a lost update fails the run).
import { MikroORM, EntitySchema as MikroSchema, OptimisticLockError } from '@mikro-orm/postgresql';
import { DataSource, EntitySchema as TypeOrmSchema } from 'typeorm';

/**
 * Rows `c0…c<writers-1>` of `table`, each (label 'counter i', count 0, version 1), and a row
 * 'stale' for the stale-write check; resolves to the updates a side has counted per row.
 */
async function seed(pool, ddl, table, writers) {
  await pool.query(`DROP TABLE IF EXISTS "${table}"`);
  await pool.query(ddl(table));
  for (const id of [...Array.from({ length: writers }, (_, i) => `c${i}`), 'stale'])
    await pool.query(`INSERT INTO "${table}" ("id", "version", "label", "count") VALUES ($1, 1, $1, 0)`, [id]);
  return Array.from({ length: writers }, () => 0);
}

/** Fails unless every row holds the count and version its side counted. */
async function verifyRows(pool, table, updates, name) {
  const { rows } = await pool.query(`SELECT "id", "version", "count" FROM "${table}" WHERE "id" <> 'stale'`);
  if (rows.length !== updates.length) throw new Error(`${name}: ${rows.length} rows for ${updates.length} writers`);
  for (const row of rows) {
    const n = updates[Number(row.id.slice(1))];
    if (Number(row.count) !== n || Number(row.version) !== n + 1)
      throw new Error(`${name}: ${row.id} holds count ${row.count}, version ${row.version} after ${n} updates`);
  }
}

/**
 * MikroORM 6 on `url`: `connectionOptions` are pg's `options` (e.g. '-c synchronous_commit=off').
 * Resolves to a side: { loadUpdate(i), staleWrite(), verify(), close() }.
 */
export async function mikroOrmSide({ url, pool, ddl, table, writers, connectionOptions }) {
  const updates = await seed(pool, ddl, table, writers);
  const Counter = new MikroSchema({
    name: 'MikroCounter',
    tableName: table,
    properties: {
      id: { type: 'string', primary: true },
      version: { type: 'number', version: true },
      label: { type: 'string' },
      count: { type: 'number' },
    },
  });
  const orm = await MikroORM.init({
    clientUrl: url,
    entities: [Counter],
    pool: { min: 0, max: writers },
    driverOptions: { connection: { options: connectionOptions } },
    debug: process.env.ORM_DEBUG === '1',
  });
  const loadUpdate = async (i) => {
    const em = orm.em.fork();
    const counter = await em.findOneOrFail('MikroCounter', { id: `c${i}` });
    const before = Number(counter.version);
    counter.count++;
    await em.flush(); // throws OptimisticLockError when the version moved
    if (Number(counter.version) !== before + 1)
      throw new Error(`MikroORM left version ${counter.version} after ${before}`);
    updates[i]++;
  };
  /** Two loads of one row, both changed and flushed: the second flush must be refused. */
  const staleWrite = async () => {
    const [first, second] = [orm.em.fork(), orm.em.fork()];
    const a = await first.findOneOrFail('MikroCounter', { id: 'stale' });
    const b = await second.findOneOrFail('MikroCounter', { id: 'stale' });
    a.count++;
    await first.flush();
    b.count += 10;
    try {
      await second.flush();
    } catch (error) {
      if (error instanceof OptimisticLockError) return 'MikroORM: a flush of a stale entity throws OptimisticLockError';
      throw error;
    }
    throw new Error('MikroORM: a flush of a stale entity went through');
  };
  return {
    loadUpdate,
    staleWrite,
    verify: () => verifyRows(pool, table, updates, 'MikroORM'),
    close: async () => {
      await orm.close(true);
      await pool.query(`DROP TABLE IF EXISTS "${table}"`);
    },
  };
}

/** TypeORM on `url`, as mikroOrmSide; its updates are the checked query-builder form. */
export async function typeOrmSide({ url, pool, ddl, table, writers, connectionOptions }) {
  const updates = await seed(pool, ddl, table, writers);
  const Counter = new TypeOrmSchema({
    name: 'TypeOrmCounter',
    tableName: table,
    columns: {
      id: { type: 'text', primary: true },
      version: { type: 'bigint', version: true },
      label: { type: 'text' },
      count: { type: 'integer' },
    },
  });
  const dataSource = new DataSource({
    type: 'postgres',
    url,
    entities: [Counter],
    poolSize: writers,
    extra: { options: connectionOptions },
    logging: process.env.ORM_DEBUG === '1',
  });
  await dataSource.initialize();
  const repository = dataSource.getRepository(Counter);
  const loadUpdate = async (i) => {
    const counter = await repository.findOneBy({ id: `c${i}` });
    const before = Number(counter.version);
    const result = await repository
      .createQueryBuilder()
      .update()
      .set({ label: counter.label, count: counter.count + 1 }) // the version column is advanced by TypeORM
      .where('id = :id AND version = :version', { id: counter.id, version: counter.version })
      .returning(['version'])
      .execute();
    if (result.affected !== 1) throw new Error(`TypeORM checked update matched ${result.affected} rows`);
    const after = Number(result.raw[0]?.version);
    if (after !== before + 1) throw new Error(`TypeORM left version ${after} after ${before}`);
    updates[i]++;
  };
  /** What save() does with a stale entity (reported, not timed: the checked form is what is timed). */
  const staleWrite = async () => {
    const a = await repository.findOneBy({ id: 'stale' });
    const b = await repository.findOneBy({ id: 'stale' });
    a.count++;
    await repository.save(a);
    b.count += 10;
    await repository.save(b); // no version in its WHERE: it goes through, over a's write
    const { rows } = await pool.query(`SELECT "count" FROM "${table}" WHERE "id" = 'stale'`);
    return Number(rows[0].count) === b.count
      ? "TypeORM: save() of a stale entity went through over the other write (a lost update), so the timed side is the query builder's checked UPDATE"
      : `TypeORM: save() of a stale entity left count ${rows[0].count}`;
  };
  return {
    loadUpdate,
    staleWrite,
    verify: () => verifyRows(pool, table, updates, 'TypeORM'),
    close: async () => {
      await dataSource.destroy();
      await pool.query(`DROP TABLE IF EXISTS "${table}"`);
    },
  };
}
