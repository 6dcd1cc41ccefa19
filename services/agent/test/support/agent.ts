import { once } from 'node:events';
import { freePort, spawnService, type RunningService } from '@brokkr/testkit';
import type { RegisteredAgent } from './broker.ts';

export interface RunningAgentProcess extends RunningService {
  healthUrl: string;
}

/** Runs the agent's real main against the broker and cluster; resolves once /healthz answers. */
export async function spawnAgent(
  brokerUrl: string,
  agent: Pick<RegisteredAgent, 'name' | 'clusterName' | 'pak'>,
  kubeconfigPath: string,
  options: { env?: Record<string, string>; waitReady?: boolean } = {},
): Promise<RunningAgentProcess> {
  const { env = {}, waitReady = true } = options;
  const port = await freePort();
  const service = await spawnService({
    service: 'agent',
    env: {
      BROKKR__AGENT__BROKER_URL: brokerUrl,
      BROKKR__AGENT__PAK: agent.pak,
      BROKKR__AGENT__AGENT_NAME: agent.name,
      BROKKR__AGENT__CLUSTER_NAME: agent.clusterName,
      BROKKR__AGENT__KUBECONFIG: kubeconfigPath,
      BROKKR__AGENT__HEALTH_PORT: String(port),
      BROKKR__AGENT__POLLING_INTERVAL: '1',
      BROKKR__AGENT__LONG_POLL_WAIT_SECONDS: '10',
      BROKKR__AGENT__RETRY_BACKOFF_BASE_MS: '200',
      BROKKR__AGENT__RETRY_BACKOFF_MAX_SECONDS: '2',
      BROKKR__AGENT__DEPLOYMENT_HEALTH_INTERVAL: '30',
      BROKKR__AGENT__CRD_ESTABLISHED_TIMEOUT_SECONDS: '30',
      BROKKR__LOG__LEVEL: 'debug',
      ...env,
    },
    ...(waitReady ? { readyUrl: `http://127.0.0.1:${port}/healthz` } : {}),
  });
  return Object.assign(service, { healthUrl: `http://127.0.0.1:${port}` });
}

/** Runs the agent until it exits by itself (start-up failures); resolves with its exit code and output. */
export async function runAgentToExit(
  brokerUrl: string,
  agent: Pick<RegisteredAgent, 'name' | 'clusterName' | 'pak'>,
  kubeconfigPath: string,
  env: Record<string, string> = {},
): Promise<{ code: number | null; output: string }> {
  const proc = await spawnAgent(brokerUrl, agent, kubeconfigPath, { env: { BROKKR__AGENT__MAX_RETRIES: '3', ...env }, waitReady: false });
  const [code] = (await (proc.child.exitCode !== null ? [proc.child.exitCode] : once(proc.child, 'exit'))) as [number | null];
  return { code, output: proc.output() };
}
