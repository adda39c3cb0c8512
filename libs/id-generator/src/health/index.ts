// `@ddd-kit/id-generator/health`: health indicators for `@nestjs/terminus` (not a declared peer, see docs/versions.md:
// only applications that import this entry need it installed).
export {
  MachineIdHealthIndicator,
  type MachineIdHealthCheckOptions,
  type MachineIdHealthDetails,
} from './machine-id.health-indicator.js';
