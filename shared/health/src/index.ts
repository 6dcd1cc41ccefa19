export { startHealthServer, type HealthServer, type HealthServerSettings } from './server.ts';
export {
  createReadiness,
  runChecks,
  pgCheck,
  natsCheck,
  type ReadinessCheck,
  type ReadinessOptions,
  type ReadinessResult,
  type PgQueryable,
  type NatsPingable,
} from './readiness.ts';
