// `@ddd-kit/prepare-key/health`: health indicators for `@nestjs/terminus` (not a declared peer, see docs/versions.md:
// only applications that import this entry need it installed).
export {
  DEFAULT_PREPARE_KEY_HEALTH_TIMEOUT_MS,
  PrepareKeyHealthIndicator,
  type PrepareKeyHealthCheckOptions,
} from './prepare-key.health-indicator.js';
