// `@ddd-kit/repository/health`: health indicators for `@nestjs/terminus` (not a declared peer, see docs/versions.md:
// only applications that import this entry need it installed).
export {
  DEFAULT_REPOSITORY_HEALTH_TIMEOUT_MS,
  RepositoryHealthIndicator,
  type RepositoryHealthCheckOptions,
} from './repository.health-indicator.js';
export {
  DEFAULT_OUTBOX_HEALTH_TIMEOUT_MS,
  DEFAULT_OUTBOX_MAX_LAG_MS,
  OutboxHealthIndicator,
  type OutboxHealthCheckOptions,
} from './outbox.health-indicator.js';
