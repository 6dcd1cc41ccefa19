// The render-job queue between the api and the renderer service (docs/adr/0046): one SQL module per
// transition of a render_jobs row (src/sql/), the renderer registry, the lease and liveness lengths,
// and the LISTEN connection that wakes each side. The api and the renderer import only this file.
export { RENDER_DONE_CHANNEL, RENDER_JOBS_CHANNEL } from './channels.ts';
export { renderJobKey, type RenderJobResult, type RenderJobSpec } from './job.ts';
export { ABANDONED_AFTER_SECONDS, ALIVE_SECONDS, HEARTBEAT_SECONDS, LEASE_MARGIN_SECONDS, leaseSeconds } from './timing.ts';
export { listenChannel, type ChannelListener, type ListenOptions } from './listener.ts';
export { joinRenderJob, type JoinedJob } from './sql/join-job.ts';
export { leaveRenderJob } from './sql/leave-job.ts';
export { deleteUnwaitedRenderJob } from './sql/delete-unwaited-job.ts';
export { claimRenderJobs, type ClaimedRenderJob, type ClaimOptions } from './sql/claim-jobs.ts';
export { recordRenderResult } from './sql/record-result.ts';
export { releaseRenderClaims } from './sql/release-claims.ts';
export { deleteAbandonedRenderJobs } from './sql/delete-abandoned-jobs.ts';
export { registerRenderer, type RendererRegistration } from './sql/register-renderer.ts';
export { unregisterRenderer } from './sql/unregister-renderer.ts';
export { forgetDeadRenderers } from './sql/forget-dead-renderers.ts';
export {
  doneRenderJobKeys,
  liveRendererVersion,
  renderJobResult,
  renderQueueDepth,
  resultOfRow,
  type RenderQueueDepth,
} from './sql/queries.ts';
