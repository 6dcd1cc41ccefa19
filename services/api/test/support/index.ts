export { ApiClient, type ApiResponse, type RequestOptions } from './client.ts';
export { startTestApi, spawnApi, type TestApi, type ApiProcess, type StartApiOptions } from './api.ts';
export {
  createGenerator,
  createAgent,
  createStack,
  adminGeneratorId,
  uniqueName,
  insertAgentRow,
  type Generator,
  type AgentRowOptions,
} from './factories.ts';
export { readStream, auditMessages, collectCore, type StreamMessage, type AuditMessage } from './nats.ts';
export { RFC3339_Z, type EventEnvelope } from './shapes.ts';
