import { maintenanceScheduleSchema, type MaintenanceSchedule } from '@brokkr/contracts';
import type { Logger } from '@brokkr/logger';
import type { KubeClient } from '../kube/client.ts';
import { isNotFound } from '../kube/errors.ts';
import { FIELD_MANAGER } from '../manifest/keys.ts';

/**
 * The last maintenance schedule the agent got, kept in a ConfigMap of its own namespace
 * (`brokkr-agent-schedule-<agent id>`, written with server-side apply as the cluster-events
 * cursor is), so a restarted agent holds its windows even if the hub it meets first serves none.
 * Without an agent namespace the schedule is kept in memory only.
 */
export class ScheduleStore {
  private saving: Promise<void> = Promise.resolve();

  private constructor(
    private readonly where: { kube: KubeClient; path: string; name: string; namespace: string; logger: Logger },
    readonly loaded: MaintenanceSchedule | undefined,
  ) {}

  static async load(kube: KubeClient, namespace: string | undefined, agentId: string, logger: Logger): Promise<ScheduleStore | undefined> {
    if (!namespace) return undefined;
    const name = `brokkr-agent-schedule-${agentId}`;
    const path = `/api/v1/namespaces/${encodeURIComponent(namespace)}/configmaps/${name}`;
    let loaded: MaintenanceSchedule | undefined;
    try {
      const cm = await kube.request<{ data?: Record<string, string> }>('GET', path);
      if (cm.data?.schedule) loaded = maintenanceScheduleSchema.parse(JSON.parse(cm.data.schedule));
    } catch (err) {
      if (!isNotFound(err)) logger.warn({ err, namespace, name }, 'kept maintenance schedule not read: waiting for the hub to serve one');
    }
    return new ScheduleStore({ kube, path, name, namespace, logger }, loaded);
  }

  /** Writes the schedule (one write at a time; a failed write is logged and made again with the next change). */
  save(schedule: MaintenanceSchedule): Promise<void> {
    const { kube, path, name, namespace, logger } = this.where;
    this.saving = this.saving.then(async () => {
      try {
        await kube.request('PATCH', path, {
          query: { fieldManager: `${FIELD_MANAGER}-schedule`, force: 'true' },
          contentType: 'application/apply-patch+yaml',
          body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace }, data: { schedule: JSON.stringify(schedule) } },
          retry: false,
        });
      } catch (err) {
        logger.warn({ err }, 'maintenance schedule not kept in the cluster (kept in memory)');
      }
    });
    return this.saving;
  }
}
