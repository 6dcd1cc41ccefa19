import type { ApiContext } from '../../context.ts';

export type TelemetryFrameType = 'k8s_event' | 'pod_log_line' | 'log_gap';

/** Not finished: telemetry frames are dropped until the ingest lands. */
export async function ingestTelemetryFrame(ctx: ApiContext, agentId: string, type: TelemetryFrameType, body: unknown): Promise<void> {
  void body;
  ctx.logger.debug({ agentId, type }, 'telemetry frame dropped (ingest not finished)');
}
