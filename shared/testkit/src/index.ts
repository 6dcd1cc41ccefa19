export { createTestDatabase, createEmptyDatabase, withDatabase, type TestDatabase } from './database.ts';
export { startTestNats } from './nats.ts';
export { spawnService, type RunningService, type SpawnServiceOptions } from './service.ts';
export { eventually } from './wait.ts';
export { freePort } from '@brokkr/infra';
