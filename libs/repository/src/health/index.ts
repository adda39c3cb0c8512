// `@ddd-kit/repository/health`: health indicators for `@nestjs/terminus` (an optional peer:
// only applications that import this entry need it installed).
export {
  DEFAULT_REPOSITORY_HEALTH_TIMEOUT_MS,
  RepositoryHealthIndicator,
  type RepositoryHealthCheckOptions,
} from './repository.health-indicator.js';
// The outbox backlog indicator (pending data-sync events, the relay's lag from its `status()`)
// belongs here, as `outbox.health-indicator.ts`, once the outbox relay exists.
