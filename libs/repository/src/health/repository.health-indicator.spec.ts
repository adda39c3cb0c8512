// The repository health indicator without a store to reach: a backend of its own whose ping
// answers or fails. On the real stores, behind the fault proxy: test/repository/repository.health-indicator.spec.ts.
import { describe, expect, it } from '@jest/globals';
import { HealthIndicatorService } from '@nestjs/terminus';
import type { RepositoryBackend } from '../backends/repository-backend.interface.js';
import { RepositoryHealthIndicator } from './repository.health-indicator.js';

/** Terminus's logger, recording what it warns about. */
function recordingLogger() {
  const warnings: unknown[] = [];
  return {
    warnings,
    logger: { log: () => undefined, warn: (m: unknown) => warnings.push(m), error: (m: unknown) => warnings.push(m) },
  };
}

const backend = (name: string, ping: () => Promise<void>) => ({ name, ping }) as unknown as RepositoryBackend;

describe('RepositoryHealthIndicator', () => {
  it('names the stores it pinged, without a warning in the log (terminus deprecates adding the value attempt() returns)', async () => {
    const { warnings, logger } = recordingLogger();
    const indicator = new RepositoryHealthIndicator(new HealthIndicatorService(logger), [
      backend('mongodb', async () => undefined),
      backend('postgresql', async () => undefined),
    ]);
    expect(await indicator.isHealthy()).toEqual({
      repository: { status: 'up', stores: ['mongodb', 'postgresql'], responseTime: expect.any(Number) },
    });
    expect(warnings).toEqual([]);
  });

  it('is down naming the store whose ping failed', async () => {
    const { warnings, logger } = recordingLogger();
    const indicator = new RepositoryHealthIndicator(new HealthIndicatorService(logger), [
      backend('mongodb', async () => undefined),
      backend('postgresql', () => Promise.reject(new Error('connection refused'))),
    ]);
    expect((await indicator.isHealthy('stores')).stores).toEqual({
      status: 'down',
      message: 'postgresql: connection refused',
      responseTime: expect.any(Number),
    });
    expect(warnings).toEqual([]);
  });
});
