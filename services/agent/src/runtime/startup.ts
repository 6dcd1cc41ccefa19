import type { Logger } from '@brokkr/logger';
import type { BrokerClient } from '../broker/client.ts';
import { BrokerError } from '../broker/http.ts';
import type { AgentRecord } from '../broker/types.ts';
import { KubeClient } from '../kube/client.ts';
import { loadKubeConfig } from '../kube/load-config.ts';
import { errorMessage, sleep } from '../util/async.ts';

/** Start-up cannot continue; the message says what the operator has to fix. Exit code 1. */
export class StartupError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'StartupError';
  }
}

/** Brokkr's agent: GET /readyz, one attempt per second. */
export async function waitForBroker(broker: BrokerClient, attempts: number, logger: Logger, signal?: AbortSignal): Promise<void> {
  for (let i = 1; i <= attempts; i++) {
    if (await broker.ready()) return;
    if (signal?.aborted) break;
    if (i === 1 || i % 10 === 0) logger.info({ attempt: i, of: attempts }, 'waiting for the broker to be ready');
    await sleep(1000, signal);
  }
  throw new StartupError(`the broker did not become ready after ${attempts} attempts`);
}

/** Verifies the PAK, then finds the agent record it belongs to. */
export async function identify(broker: BrokerClient, name: string, clusterName: string): Promise<AgentRecord> {
  let agentId: string | null;
  try {
    agentId = (await broker.verifyPak()).agent;
  } catch (err) {
    if (err instanceof BrokerError && err.status === 401)
      throw new StartupError('Invalid agent PAK: the broker rejected BROKKR__AGENT__PAK', { cause: err });
    throw new StartupError(`verifying the PAK failed: ${errorMessage(err)}`, { cause: err });
  }
  let agent: AgentRecord;
  try {
    agent = await broker.findAgent(name, clusterName);
  } catch (err) {
    if (err instanceof BrokerError && err.status === 404) {
      throw new StartupError(`Agent not found: no agent named '${name}' in cluster '${clusterName}' is registered with the broker`, {
        cause: err,
      });
    }
    if (err instanceof BrokerError && err.status === 403) {
      throw new StartupError(`the PAK does not belong to agent '${name}' in cluster '${clusterName}'`, { cause: err });
    }
    throw new StartupError(`looking up agent '${name}' failed: ${errorMessage(err)}`, { cause: err });
  }
  if (agentId !== agent.id) {
    throw new StartupError(`BROKKR__AGENT__PAK is not agent '${name}'s PAK (heartbeats and events must be sent with the agent's own PAK)`);
  }
  return agent;
}

/** The Kubernetes client, checked with GET /version. */
export async function connectKubernetes(
  kubeconfig: string | undefined,
  connections: number,
): Promise<{ kube: KubeClient; version: string }> {
  let kube: KubeClient;
  try {
    kube = await KubeClient.create(loadKubeConfig(kubeconfig), connections);
  } catch (err) {
    throw new StartupError(`cannot configure the Kubernetes client: ${errorMessage(err)}`, { cause: err });
  }
  try {
    const v = await kube.version(10_000);
    return { kube, version: v.gitVersion };
  } catch (err) {
    await kube.close();
    throw new StartupError(`the Kubernetes API at ${kube.server} is not reachable: ${errorMessage(err)}`, { cause: err });
  }
}
