import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { collectSchemaStatements } from '@ddd-kit/core/postgres';
import { AppModule } from './app.module.js';
import { StderrLogger } from './common/stderr-logger.js';
import { loadConfigOrExit } from './config/app-config.js';

/**
 * `npm run schema -w apps/registration`: every PostgreSQL statement the configured backends
 * need, in order, on stdout, for a migration. It boots the app without a statement of DDL,
 * a machine-ID lease or a relay; nothing is created or changed.
 */
async function main(): Promise<void> {
  const config = loadConfigOrExit();
  const statements = await collectSchemaStatements(() =>
    NestFactory.createApplicationContext(AppModule.forRoot({ ...config, outboxRelay: false }), {
      logger: new StderrLogger({ logLevels: ['error', 'warn'] }),
    }),
  );
  if (statements.length === 0) {
    console.error(
      'No PostgreSQL tables in this configuration (set PREPARE_BACKEND, REPOSITORY_BACKEND or MACHINE_ID to postgres).',
    );
    return;
  }
  // Some parts give several statements in one string, already ended with `;`.
  console.log(statements.map((statement) => `${statement.trim().replace(/;$/, '')};`).join('\n\n'));
}

void main();
