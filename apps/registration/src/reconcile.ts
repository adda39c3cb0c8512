import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { AppModule } from './app.module.js';
import { StderrLogger } from './common/stderr-logger.js';
import { loadConfigOrExit } from './config/app-config.js';
import { RegistrationReconciler } from './reconciliation/registration-reconciler.js';

/**
 * `npm run reconcile -w apps/registration`: one pass of the username and read-model
 * reconcilers against the configured backends, then a JSON report on stdout. Meant for a
 * nightly job, or after an incident. It refuses to run against a repository that is not shared:
 * an in-memory one starts empty here, and every reservation would be judged against no users.
 */
async function main(): Promise<void> {
  const config = loadConfigOrExit(); // a bad variable: one clear line and exit code 1 (AppModule reads the same environment)
  if (config.repositoryBackend === 'memory') {
    console.error(
      'Refusing to reconcile: REPOSITORY_BACKEND is memory, so this process would see no users and release every reservation. ' +
        'Run it with the REPOSITORY_BACKEND (and store URLs) of the deployment it repairs.',
    );
    process.exit(1);
  }
  // The deployment's instances relay its events; this one-off job only reads and repairs.
  const app = await NestFactory.createApplicationContext(AppModule.forRoot({ ...config, outboxRelay: false }), {
    logger: new StderrLogger({ logLevels: ['error', 'warn'] }),
  });
  app.enableShutdownHooks();
  try {
    const report = await app
      .get(RegistrationReconciler)
      .run(({ done, perSecond }) => console.error(`usernames: ${done} records, ${Math.round(perSecond)}/s`));
    console.log(JSON.stringify(report, null, 2));
  } finally {
    await app.close();
  }
}

void main();
