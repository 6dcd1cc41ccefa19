import type { Logger } from '@brokkr/logger';
import type { Registry } from '@brokkr/telemetry';
import type { AgentSettings } from '../config.ts';
import type { GrantBook } from '../grants/book.ts';
import type { Discovery } from '../kube/discovery.ts';
import type { KubeObjects } from '../kube/objects.ts';
import { PreviewBrokerApi } from './broker-api.ts';
import { PreviewLoop } from './loop.ts';

export interface PreviewWiring {
  settings: AgentSettings;
  objects: KubeObjects;
  discovery: Discovery;
  agentId: string;
  registry: Registry;
  logger: Logger;
  isActive(): boolean;
  grants: GrantBook;
}

/** The preview loop wired to the hub and the cluster; the runtime runs it and calls `wake()` on hints. */
export function createPreviewLoop(w: PreviewWiring): PreviewLoop {
  const { settings } = w;
  return new PreviewLoop({
    api: new PreviewBrokerApi(settings.brokerUrl, settings.pak),
    scope: {
      objects: w.objects,
      discovery: w.discovery,
      agentId: w.agentId,
      watchNamespace: settings.watchNamespace,
      concurrency: settings.concurrency,
      adoptionEnabled: settings.adoptionEnabled,
      grants: w.grants,
      tenantPodSecurity: settings.tenantPodSecurity,
    },
    agentId: w.agentId,
    pollingIntervalMs: settings.pollingIntervalMs,
    longPollWaitSeconds: settings.longPollWaitSeconds,
    registry: w.registry,
    logger: w.logger.child({ loop: 'previews' }),
    isActive: w.isActive,
  });
}
