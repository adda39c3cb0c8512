import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { collectSchemaStatements, runSchemaCommand, type SchemaCommand } from '@ddd-kit/core/postgres';
import { AppModule } from './app.module.js';
import { StderrLogger } from './common/stderr-logger.js';
import { loadConfigOrExit } from './config/app-config.js';

/**
 * `npm run schema -w apps/registration -- status|up|sql`: the versioned migrations of every
 * PostgreSQL part the configuration has. `status` lists what the database lacks (exit 1 when
 * anything does), `up` applies it, `sql` prints it as a script. Without a command: every
 * statement a new database needs, without connecting. The app is booted without DDL, a
 * machine-ID lease or a relay.
 */
async function main(): Promise<void> {
  const command = process.argv[2];
  if (command !== undefined && !['status', 'up', 'sql'].includes(command)) {
    console.error(`usage: npm run schema -- [status|up|sql]; got ${JSON.stringify(command)}`);
    process.exitCode = 2;
    return;
  }
  const config = loadConfigOrExit();
  const bootstrap = () =>
    NestFactory.createApplicationContext(AppModule.forRoot({ ...config, outboxRelay: false }), {
      logger: new StderrLogger({ logLevels: ['error', 'warn'] }),
    });
  if (command !== undefined) {
    process.exitCode = await runSchemaCommand(command as SchemaCommand, bootstrap);
    return;
  }
  const statements = await collectSchemaStatements(bootstrap);
  if (statements.length === 0) {
    console.error(
      'No PostgreSQL tables in this configuration (set PREPARE_BACKEND, REPOSITORY_BACKEND or MACHINE_ID to postgres).',
    );
    return;
  }
  // Some parts give several statements in one string, already ended with `;`.
  console.log(statements.map((statement) => `${statement.trim().replace(/;$/, '')};`).join('\n\n'));
}

main().catch((error: unknown) => {
  // The database's refusal or absence, said once, without a stack.
  console.error(error instanceof Error ? error.message : error);
  process.exitCode = 1;
});
