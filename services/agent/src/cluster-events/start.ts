import { existsSync, readFileSync } from 'node:fs';
import type { Logger } from '@brokkr/logger';
import type { KubeClient } from '../kube/client.ts';
import type { Discovery } from '../kube/discovery.ts';
import { loadKubeConfig } from '../kube/load-config.ts';
import type { KubeObjects } from '../kube/objects.ts';
import type { StackAdmission } from './admission.ts';
import type { ClusterEventsChannel } from './channel.ts';
import { CursorStore } from './cursor-store.ts';
import { EventTailer } from './event-tailer.ts';
import { kubeletLogs } from './log-source.ts';
import { PodLogTailer } from './pod-log-tailer.ts';

const SERVICE_ACCOUNT_NAMESPACE = '/var/run/secrets/kubernetes.io/serviceaccount/namespace';

export interface ClusterEventsOptions {
  kube: KubeClient;
  objects: KubeObjects;
  discovery: Discovery;
  /** The agent channel (cluster events have no REST fallback). */
  channel: ClusterEventsChannel;
  agentId: string;
  /** The kubeconfig file the agent uses (client-node's watch and log clients are built from it). */
  kubeconfig: string | undefined;
  watchNamespace: string | undefined;
  /** Whether an object's events or logs may go to the stack it names (grants/book.ts). */
  grants: StackAdmission;
  /** Where the resume cursor ConfigMap lives; default: the agent pod's namespace, else the watched one, else `default`. */
  stateNamespace?: string | undefined;
  logger: Logger;
}

export interface RunningClusterEvents {
  /** Stops the watches and tails, then saves the cursor. */
  stop(): Promise<void>;
}

function defaultStateNamespace(watchNamespace: string | undefined): string {
  if (existsSync(SERVICE_ACCOUNT_NAMESPACE)) return readFileSync(SERVICE_ACCOUNT_NAMESPACE, 'utf8').trim();
  return watchNamespace ?? 'default';
}

/**
 * Cluster events: the Kubernetes Events of objects carrying the stack
 * marker, and the logs of pods that opt in, streamed over the live channel. Runs whatever the
 * agent's status; the hub stores only what concerns stacks the agent targets.
 */
export async function startClusterEvents(options: ClusterEventsOptions): Promise<RunningClusterEvents> {
  const logger = options.logger.child({ loop: 'cluster-events' });
  const kc = loadKubeConfig(options.kubeconfig);
  const namespace = options.stateNamespace ?? defaultStateNamespace(options.watchNamespace);
  const cursor = await CursorStore.load(options.kube, namespace, options.agentId, logger);
  const common = {
    kc,
    channel: options.channel,
    cursor,
    agentId: options.agentId,
    watchNamespace: options.watchNamespace,
    grants: options.grants,
    logger,
  };
  const events = new EventTailer({ ...common, objects: options.objects, discovery: options.discovery });
  const logs = new PodLogTailer({ ...common, source: kubeletLogs(options.kube) });
  options.grants.onRefresh(() => {
    events.retryUnsent();
    logs.recheck();
  });
  const onState = (state: string) => {
    if (state !== 'up') return;
    events.retryUnsent();
    logs.retryUnsent();
  };
  options.channel.on('state', onState);
  const controller = new AbortController();
  const running = Promise.allSettled([events.run(controller.signal), logs.run(controller.signal)]);
  logger.info(
    { stateNamespace: namespace, watchNamespace: options.watchNamespace ?? '(all)' },
    'streaming Kubernetes events and opted-in pod logs',
  );
  return {
    async stop() {
      options.channel.off?.('state', onState);
      controller.abort();
      await running;
      await cursor.save();
    },
  };
}
