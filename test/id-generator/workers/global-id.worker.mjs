// One application instance for the multi-process tests: starts IdGeneratorModule with a
// RedisMachineIdDistributor in a Nest application context, writes `count` global IDs to a file
// (one write per chunk, so a SIGKILL leaves only whole chunks), reports to the parent over IPC,
// and closes (reverting its machine ID) when the parent says "finish".
// Plain ESM importing the BUILT library, as a real application would.
import 'reflect-metadata';
import { closeSync, openSync, writeSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { NestFactory } from '@nestjs/core';
import { Redis } from 'ioredis';
import { GlobalIdGenerator, IdGeneratorModule, MachineIdHolder, MachineIdOverflowError, RedisMachineIdDistributor } from '@ddd-kit/id-generator';

const config = JSON.parse(process.argv[2]);
const send = (message) => process.send?.(message);

const redis = new Redis(process.env.REDIS_URL);
const distributor = new RedisMachineIdDistributor(redis, { safeGuardMs: config.safeGuardMs, guardIntervalMs: config.guardIntervalMs });

// All machine IDs may be held (a killed instance's until it is reclaimed): retry until one is free.
let app;
let overflowAttempts = 0;
for (;;) {
  try {
    app = await NestFactory.createApplicationContext(
      IdGeneratorModule.forRoot({ machine: distributor, namespace: config.namespace, machineBits: config.machineBits }),
      { logger: false, abortOnError: false },
    );
    break;
  } catch (error) {
    if (!(error instanceof MachineIdOverflowError)) throw error;
    overflowAttempts++;
    await sleep(100);
  }
}
const holder = app.get(MachineIdHolder);
const generator = app.get(GlobalIdGenerator);
send({ type: 'started', machineId: holder.machineId, instanceId: holder.instanceId, acquiredAt: Date.now(), overflowAttempts });

const fd = openSync(config.file, 'w');
let written = 0;
while (written < config.count) {
  const n = Math.min(config.chunk, config.count - written);
  const ids = new Array(n);
  for (let i = 0; i < n; i++) {
    try {
      ids[i] = generator.generate();
    } catch {
      ids[i] = await generator.generateAsync(); // a clock step back: wait it out
    }
  }
  writeSync(fd, `${ids.join('\n')}\n`);
  written += n;
  send({ type: 'progress', written });
  await sleep(config.pauseMs);
}
closeSync(fd);
send({ type: 'generated', written });

process.on('message', async (message) => {
  if (message !== 'finish') return;
  await app.close();
  redis.disconnect();
  send({ type: 'closed' });
  process.disconnect();
});
