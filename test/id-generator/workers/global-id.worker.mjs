// One application instance for the multi-process tests: starts IdGeneratorModule with a Redis or
// PostgreSQL machine-ID distributor in a Nest application context and writes global IDs to a
// file (one write per chunk, so a SIGKILL leaves only whole chunks), reporting to the parent
// over IPC; it closes (reverting its machine ID) when the parent says "finish".
//   mode 'count':      `count` IDs, `chunk` at a time, `pauseMs` between chunks, then waits
//   mode 'continuous': IDs until told "finish", `chunk` at a time (the paused-holder test)
// When generate() throws (clock step back, lease expired, machine ID lost and being replaced)
// it falls back to generateAsync(), which waits that out; errors it cannot wait out are reported.
// Plain ESM importing the BUILT library, as a real application would.
import 'reflect-metadata';
import { appendFileSync, closeSync, openSync, writeSync } from 'node:fs';
import { setImmediate as yieldToLoop, setTimeout as sleep } from 'node:timers/promises';
import { NestFactory } from '@nestjs/core';
import * as ids from '@ddd-kit/id-generator';

const { GlobalIdGenerator, IdGeneratorModule, MachineIdHolder, MachineIdOverflowError, RedisMachineIdDistributor } =
  ids;

const config = JSON.parse(process.argv[2]);
const send = (message) => process.send?.(message);
const leaseOptions = { safeGuardMs: config.safeGuardMs, guardIntervalMs: config.guardIntervalMs };

let close = async () => undefined;
let distributor;
if (config.backend.kind === 'redis') {
  const { Redis } = await import('ioredis');
  const redis = new Redis(config.backend.url);
  distributor = new RedisMachineIdDistributor(redis, leaseOptions);
  close = async () => redis.disconnect();
} else if (config.backend.kind === 'redis-cluster') {
  const { Cluster } = await import('ioredis');
  const cluster = new Cluster(config.backend.nodes);
  distributor = new RedisMachineIdDistributor(cluster, leaseOptions);
  close = async () => cluster.disconnect();
} else {
  const { default: pg } = await import('pg');
  const pool = new pg.Pool({ connectionString: config.backend.url, max: 2 });
  distributor = new ids.PostgresMachineIdDistributor(pool, { ...leaseOptions, schema: config.backend.schema });
  close = () => pool.end();
}

// All machine IDs may be held (a killed instance's until it is reclaimed): retry until one is free.
let app;
let overflowAttempts = 0;
for (;;) {
  try {
    app = await NestFactory.createApplicationContext(
      IdGeneratorModule.forRoot({ machine: distributor, namespace: config.namespace, machineBits: config.machineBits }),
      { logger: config.log ? ['log', 'warn', 'error'] : false, abortOnError: false },
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
send({
  type: 'started',
  machineId: holder.machineId,
  instanceId: holder.instanceId,
  acquiredAt: Date.now(),
  overflowAttempts,
});

let finishing = false;
process.on('message', async (message) => {
  if (message !== 'finish' || finishing) return;
  finishing = true;
  if (config.mode === 'count') await shutdown();
});

async function shutdown() {
  await app.close();
  await close();
  send({ type: 'closed' });
  process.disconnect();
}

/** After generate() threw: generateAsync(), which waits out what passes (a few tries). */
async function recover(errors) {
  for (let attempt = 0; ; attempt++) {
    try {
      return await generator.generateAsync();
    } catch (error) {
      errors.push(error?.name ?? String(error));
      if (attempt >= 20) throw error;
    }
  }
}

if (config.mode === 'count') {
  const fd = openSync(config.file, 'w');
  let written = 0;
  const errors = [];
  while (written < config.count) {
    const n = Math.min(config.chunk, config.count - written);
    const ids = new Array(n);
    for (let i = 0; i < n; i++) {
      try {
        ids[i] = generator.generate();
      } catch {
        ids[i] = await recover(errors);
      }
    }
    writeSync(fd, `${ids.join('\n')}\n`);
    written += n;
    send({ type: 'progress', written });
    await sleep(config.pauseMs);
  }
  closeSync(fd);
  send({ type: 'generated', written, errors });
} else {
  let written = 0;
  const errors = [];
  let failed;
  while (!finishing) {
    const ids = [];
    try {
      for (let i = 0; i < config.chunk; i++) {
        try {
          ids.push(generator.generate());
        } catch {
          ids.push(await recover(errors));
        }
      }
    } catch (error) {
      failed = `${error?.name}: ${error?.message}`;
    }
    appendFileSync(config.file, ids.length ? `${ids.join('\n')}\n` : '');
    written += ids.length;
    send({ type: 'progress', written, machineId: holder.machineId, errors: errors.length });
    if (failed) break;
    await yieldToLoop();
  }
  send({ type: 'generated', written, errors, failed });
  await shutdown();
}
