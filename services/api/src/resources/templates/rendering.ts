import type { ApiContext } from '../../context.ts';
import { errorKind } from '../../http/api-error.ts';
import type { CheckJob, JobResult, RenderJob } from './engine/jobs.ts';
import { TemplateRendererBusy, createTemplateRenderer, type TemplateRenderer } from './engine/renderer.ts';

// Every worker busy and the queue full: the server is overloaded, the template may be fine.
export const templateRendererBusy = errorKind(503, 'template_renderer_busy', 'Too many templates are being rendered; retry later');

// One renderer (worker pool) per api context, created on first use and closed at shutdown. Kept
// beside the context rather than in it: templates are the only users.
const renderers = new WeakMap<ApiContext, TemplateRenderer>();

function rendererFor(ctx: ApiContext): TemplateRenderer {
  let renderer = renderers.get(ctx);
  if (!renderer) {
    const created = createTemplateRenderer();
    renderers.set(ctx, created);
    ctx.shutdownSignal.addEventListener('abort', () => void created.close(), { once: true });
    renderer = created;
  }
  return renderer;
}

/** Checks (create, PUT) or renders (instantiate) on the renderer's worker threads. */
export async function runTemplateJob(ctx: ApiContext, job: CheckJob | RenderJob): Promise<JobResult> {
  try {
    return await rendererFor(ctx).run(job);
  } catch (err) {
    if (err instanceof TemplateRendererBusy) throw templateRendererBusy();
    throw err;
  }
}
