import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { AppModule } from './app.module.js';
import { configureApp } from './common/configure-app.js';
import { InvalidConfigError, loadConfig } from './config/app-config.js';

async function bootstrap(): Promise<void> {
  let config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof InvalidConfigError) {
      console.error(`Invalid configuration: ${err.message}`);
      process.exit(1);
    }
    throw err;
  }
  const app = configureApp(await NestFactory.create<NestExpressApplication>(AppModule.forRoot(config), { bodyParser: false }));
  await app.listen(config.port);
  new Logger('Registration').log(
    `listening on http://localhost:${config.port} (prepare-key: ${config.prepareBackend}, repository: ${config.repositoryBackend}, machine id: ${config.machineId})`,
  );
}

void bootstrap();
