// Starts (or finds) Redis, a Redis Cluster, MongoDB, PostgreSQL and NATS once for the whole Jest run; the
// workers inherit the addresses through process.env.
import { provideServers } from './server-provider.js';

export default async function globalSetup() {
  const servers = await provideServers();
  globalThis.__DDD_KIT_SERVERS__ = servers;
  process.stdout.write(`\n[ddd-kit test servers]\n  ${servers.report.join('\n  ')}\n`);
}
