import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { AppModule } from './app.module.js';
import { loadConfigOrExit } from './config/app-config.js';
import { RegistrationReconciler } from './reconciliation/registration-reconciler.js';

/**
 * `npm run reconcile -w apps/registration`: one pass of the reservation and read-model
 * reconcilers against the configured backends, then a JSON report on stdout. Meant for a
 * nightly job; it only makes sense on shared backends (memory ones start empty here).
 */
async function main(): Promise<void> {
  loadConfigOrExit(); // a bad variable: one clear line and exit code 1 (AppModule reads the same environment)
  const app = await NestFactory.createApplicationContext(AppModule, { logger: ['error', 'warn'] });
  app.enableShutdownHooks();
  try {
    const report = await app.get(RegistrationReconciler).run();
    console.log(JSON.stringify(report, null, 2));
  } finally {
    await app.close();
  }
}

void main();
