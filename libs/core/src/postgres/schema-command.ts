import { PgArgumentError } from '../errors.js';
import { describePool } from './describe-pool.js';
import { pendingSql, type PgPendingMigration } from './migrations.js';
import { withCollectedSchemas, type PgSchema } from './schema.js';

/** `status`: what is pending (exit 1 when any); `up`: apply it; `sql`: print it as a script. */
export type SchemaCommand = 'status' | 'up' | 'sql';

const COMMANDS: readonly string[] = ['status', 'up', 'sql'];

function checkCommand(command: unknown): void {
  if (!COMMANDS.includes(command as string))
    throw new PgArgumentError(`schema command must be one of ${COMMANDS.join(', ')}; got ${JSON.stringify(command)}`);
}

const line = (step: PgPendingMigration): string => `${step.part} ${step.target} #${step.version} ${step.name}`;

/** One schema per part and table on each pool (two instances of a part on one table are one). */
function distinct(schemas: readonly PgSchema[]): PgSchema[] {
  const seen = new Set<string>();
  return schemas.filter((schema) => {
    const { part, target } = schema.migrationPlan();
    const key = `${describePool(schema.pool)} ${part} ${target}`;
    return !seen.has(key) && seen.add(key) !== undefined;
  });
}

/**
 * Runs `command` over the parts' schemas, each on its own pool, writing one line per finding;
 * answers the exit code: 1 for `status` when a migration is pending, else 0.
 */
export async function schemaCommand(
  command: SchemaCommand,
  schemas: readonly PgSchema[],
  write: (text: string) => void = (text) => console.log(text),
): Promise<number> {
  checkCommand(command);
  const parts = distinct(schemas);
  if (command === 'up') {
    let applied = 0;
    for (const schema of parts)
      for (const step of await schema.migrate()) {
        write(`applied  ${line(step)}`);
        applied++;
      }
    write(`up to date: ${applied} migration(s) applied, ${parts.length} part(s)`);
    return 0;
  }
  const pools = new Set(parts.map((schema) => schema.pool));
  let pending = 0;
  for (const schema of parts) {
    const status = await schema.status();
    pending += status.pending.length;
    if (command === 'sql') {
      if (status.pending.length === 0) continue;
      // Parts on several databases: say which each script is for.
      if (pools.size > 1) write(`-- on ${describePool(schema.pool)}`);
      write(`${pendingSql(status.pending)}\n`);
      continue;
    }
    for (const step of status.pending) write(`pending  ${line(step)}`);
    const { part, target } = schema.migrationPlan();
    for (const version of status.changed)
      write(`changed  ${part} ${target} #${version}: applied with other statements than this version's`);
  }
  if (command === 'sql') {
    if (pending === 0) write('-- up to date: no migration pending');
    return 0;
  }
  write(pending === 0 ? `up to date: ${parts.length} part(s)` : `${pending} migration(s) pending: run up`);
  return pending === 0 ? 0 : 1;
}

/**
 * Boots the application only to read its parts' schemas (no part creates or queries a table,
 * no relay or lease runs), runs `command` over them and closes it:
 *
 *   process.exitCode = await runSchemaCommand('status', () => NestFactory.createApplicationContext(AppModule));
 */
export async function runSchemaCommand(
  command: SchemaCommand,
  bootstrap: () => Promise<{ close(): Promise<void> }>,
  write?: (text: string) => void,
): Promise<number> {
  checkCommand(command);
  return await withCollectedSchemas(bootstrap, (schemas) => schemaCommand(command, schemas, write));
}
