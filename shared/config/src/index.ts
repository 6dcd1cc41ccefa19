export { parseEnv } from './parse.ts';
export { natsSettingsFrom, type NatsAuth, type NatsConfig, type NatsSettings, type NatsTls } from './nats.ts';
export * as fields from './fields.ts';
export { apiConfigSchema, DEFAULT_ADMIN_PAK_HASH, type ApiConfig } from './services/api.ts';
export {
  auditWriterConfigSchema,
  webhookDispatcherConfigSchema,
  maintenanceConfigSchema,
  type AuditWriterConfig,
  type WebhookDispatcherConfig,
  type MaintenanceConfig,
} from './services/hub.ts';
export { agentConfigSchema, type AgentConfig } from './services/agent.ts';
export { rendererConfigSchema, type RendererConfig } from './services/renderer.ts';
export { readConfigFile, flattenConfig, parseConfigText, type FlatConfig } from './config-file.ts';
export { loadLayeredSettings, diffSettings, dottedKey, type ConfigChange } from './reloadable.ts';
export { maintenanceReloadableSchema, hubReloadableSchema } from './reloadable-settings.ts';
