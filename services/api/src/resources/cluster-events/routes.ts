import { defineRoute, json, type AnyRoute } from '../../http/route.ts';
import { idParams } from '../../http/schemas.ts';
import { fetchOwnedStack } from '../../domain/stack-access.ts';
import {
  DEFAULT_LIMIT,
  LONG_TERM_SINK_HINT,
  RETENTION_SECONDS,
  stackEventsResponseSchema,
  stackLogsResponseSchema,
  clusterEventsQuerySchema,
} from './schemas.ts';
import { oldestRetained, clusterEventsPage, type K8sEventRow, type PodLogRow, type ClusterEventsTable } from './sql/queries.ts';

const tags = ['telemetry'];

async function retention(db: Parameters<typeof oldestRetained>[0], table: ClusterEventsTable, stackId: string) {
  return {
    retention_ceiling_seconds: RETENTION_SECONDS,
    effective_retention_seconds: RETENTION_SECONDS,
    oldest_available_ts: await oldestRetained(db, table, stackId),
    long_term_sink_hint: LONG_TERM_SINK_HINT,
  };
}

const page = (stackId: string, query: { since?: string | undefined; limit?: number | undefined }) => ({
  stackId,
  since: query.since,
  limit: query.limit ?? DEFAULT_LIMIT,
});

const description =
  'Admin or the owning generator (agents: 403 `stack_not_owned`). Selected by ingestion time, newest first, never older than ' +
  'the 6-hour retention; `since` can only narrow that window.';

/**
 * What agents streamed about a stack's objects: Kubernetes Events and the
 * log lines of pods that opted in. Written by ingest.ts, evicted after 6 hours by maintenance.
 */
export const clusterEventRoutes: AnyRoute[] = [
  defineRoute({
    method: 'get',
    path: '/stacks/:id/events',
    summary: "Kubernetes Events about a stack's objects, as streamed by its agents",
    description,
    tags,
    access: 'any',
    params: idParams,
    query: clusterEventsQuerySchema,
    responses: { 200: { description: 'Events, newest first', schema: stackEventsResponseSchema } },
    errors: [fetchOwnedStack],
    async handler({ params, query, identity, ctx }) {
      await fetchOwnedStack(ctx.db.pool, identity, params.id);
      const events = await clusterEventsPage<K8sEventRow>(ctx.db.pool, 'agent_k8s_events', page(params.id, query));
      return json(200, { retention: await retention(ctx.db.pool, 'agent_k8s_events', params.id), events });
    },
  }),

  defineRoute({
    method: 'get',
    path: '/stacks/:id/logs',
    summary: "Log lines of a stack's opted-in pods, as streamed by its agents",
    description,
    tags,
    access: 'any',
    params: idParams,
    query: clusterEventsQuerySchema,
    responses: { 200: { description: 'Log lines, newest first', schema: stackLogsResponseSchema } },
    errors: [fetchOwnedStack],
    async handler({ params, query, identity, ctx }) {
      await fetchOwnedStack(ctx.db.pool, identity, params.id);
      const lines = await clusterEventsPage<PodLogRow>(ctx.db.pool, 'agent_pod_logs', page(params.id, query));
      return json(200, { retention: await retention(ctx.db.pool, 'agent_pod_logs', params.id), lines });
    },
  }),
];
