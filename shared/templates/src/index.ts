export { createTemplateRenderer, TemplateRendererBusy, type TemplateRenderer, type TemplateRendererOptions } from './renderer.ts';
export { runJob, type CheckJob, type Job, type JobFailureCode, type JobResult, type RenderJob } from './jobs.ts';
export { TEMPLATE_ENGINE_VERSION } from './version.ts';
