import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { AppModule } from './app.module.js';
import { configureApp } from './common/configure-app.js';
import { boundShutdown } from './common/graceful-shutdown.js';
import { loadConfigOrExit } from './config/app-config.js';

async function bootstrap(): Promise<void> {
  // AppModule reads the same environment; checking it here first turns a bad variable into
  // one clear line and exit code 1 instead of a failed bootstrap.
  const config = loadConfigOrExit();
  // On SIGTERM (configureApp enables Nest's shutdown hooks): the requests already received are
  // answered first (HttpDrainModule, in RegistrationModule), then the machine ID is released and
  // the connections closed.
  const app = configureApp(await NestFactory.create<NestExpressApplication>(AppModule, { bodyParser: false }));
  boundShutdown(config.shutdownTimeoutMs);
  await app.listen(config.port);
  new Logger('Registration').log(
    `listening on http://localhost:${config.port} (prepare-key: ${config.prepareBackend}, repository: ${config.repositoryBackend}, machine id: ${config.machineId})`,
  );
}

void bootstrap();
