// CI's check of the README's first command: `npm start` (build, then the sample on embedded
// defaults) on a free port answers its readiness probe, then stops on SIGTERM. Fails when the
// process exits first or nothing answers before the ceiling, which only turns a hang into a
// failure (the build alone takes a minute on a busy 2-core machine).
//
//   node scripts/npm-start-answers.js
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

const HANG_MS = 600_000;

const port = await new Promise((resolve) => {
  const server = createServer().listen(0, '127.0.0.1', () => {
    const { port: free } = server.address();
    server.close(() => resolve(free));
  });
});

// A process group of its own, so that stopping it stops the app npm started and nothing else.
const app = spawn('npm', ['start'], { env: { ...process.env, PORT: String(port) }, detached: true, stdio: 'pipe' });
let output = '';
app.stdout.on('data', (chunk) => (output += chunk));
app.stderr.on('data', (chunk) => (output += chunk));
let exited = null;
app.on('exit', (code, signal) => (exited = { code, signal }));

const until = Date.now() + HANG_MS;
let ready = false;
while (!ready && exited === null && Date.now() < until) {
  try {
    ready = (await fetch(`http://127.0.0.1:${port}/health/ready`)).ok;
  } catch {
    // not listening yet
  }
  if (!ready) await sleep(250);
}

if (exited === null) process.kill(-app.pid, 'SIGTERM');
if (!ready) {
  console.log(
    exited === null
      ? `npm start: nothing answered within ${HANG_MS} ms`
      : `npm start exited: ${JSON.stringify(exited)}`,
  );
  console.log(output);
  process.exit(1);
}
await new Promise((resolve) => (exited === null ? app.on('exit', resolve) : resolve()));
console.log(`npm start: ready on port ${port}, then stopped on SIGTERM`);
