import { z } from 'zod';
import { bool, int, log, port } from '../fields.ts';

/** The in-cluster agent: Brokkr's BROKKR__AGENT__* names plus our resync and long-poll settings. */
export const agentConfigSchema = z.object({
  ...log,
  BROKKR__AGENT__BROKER_URL: z.string().url().default('http://localhost:3000'),
  BROKKR__AGENT__PAK: z.string().min(1, 'the agent PAK is required'),
  BROKKR__AGENT__AGENT_NAME: z.string().min(1).default('DEFAULT'),
  BROKKR__AGENT__CLUSTER_NAME: z.string().min(1).default('DEFAULT'),
  BROKKR__AGENT__POLLING_INTERVAL: int(10, 1),
  BROKKR__AGENT__HEALTH_PORT: port(8080),
  BROKKR__AGENT__DEPLOYMENT_HEALTH_ENABLED: bool(true),
  BROKKR__AGENT__DEPLOYMENT_HEALTH_INTERVAL: int(60, 1),
  BROKKR__AGENT__WATCH_NAMESPACE: z.string().optional(),
  BROKKR__AGENT__KUBECONFIG: z.string().optional(),
  BROKKR__AGENT__RESYNC_INTERVAL_SECONDS: int(300, 1),
  BROKKR__AGENT__LONG_POLL_WAIT_SECONDS: int(30, 0, 60),
});
export type AgentConfig = z.output<typeof agentConfigSchema>;
