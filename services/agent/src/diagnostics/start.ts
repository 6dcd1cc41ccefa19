import type { Logger } from '@brokkr/logger';
import type { Registry } from '@brokkr/telemetry';
import type { AgentSettings } from '../config.ts';
import type { KubeClient } from '../kube/client.ts';
import type { Discovery } from '../kube/discovery.ts';
import type { KubeObjects } from '../kube/objects.ts';
import { DiagnosticsBrokerApi } from './broker-api.ts';
import { DiagnosticsCollector } from './collector.ts';
import { DiagnosticsLoop } from './loop.ts';

/** All containers' log tails together stay under this, so a result fits the broker's 2 MiB body limit with room to spare. */
const LOG_BUDGET_BYTES = 1_048_576;

export interface DiagnosticsWiring {
  settings: AgentSettings;
  kube: KubeClient;
  objects: KubeObjects;
  discovery: Discovery;
  agentId: string;
  registry: Registry;
  logger: Logger;
  isActive(): boolean;
}

/** The diagnostics loop wired to the broker and the cluster; the runtime runs it and calls `wake()` on hints. */
export function createDiagnosticsLoop(w: DiagnosticsWiring): DiagnosticsLoop {
  const { settings } = w;
  const api = new DiagnosticsBrokerApi(settings.brokerUrl, settings.pak);
  const collector = new DiagnosticsCollector({
    kube: w.kube,
    objects: w.objects,
    discovery: w.discovery,
    broker: api,
    watchNamespace: settings.watchNamespace,
    logTails: { lines: settings.diagnostics.logTailLines, bytes: settings.diagnostics.logTailBytes, totalBytes: LOG_BUDGET_BYTES },
    maxEvents: settings.diagnostics.maxEvents,
  });
  return new DiagnosticsLoop({
    api,
    collector,
    agentId: w.agentId,
    pollingIntervalMs: settings.pollingIntervalMs,
    longPollWaitSeconds: settings.longPollWaitSeconds,
    registry: w.registry,
    logger: w.logger.child({ loop: 'diagnostics' }),
    isActive: w.isActive,
  });
}
