import { tenantOf, type Identity } from '../../auth/identity.ts';
import type { ApiContext } from '../../context.ts';
import { errorKind } from '../../errors/api-error.ts';
import {
  TemplateRendererBusy,
  createTemplateRenderer,
  type CheckJob,
  type JobResult,
  type RenderJob,
  type TemplateRenderer,
} from '@brokkr/templates';

// The tenant's share of the renderer queue is full: it may retry later; other tenants are unaffected.
export const templateRendererBusy = errorKind(503, 'template_renderer_busy', 'Too many templates are being rendered; retry later');

// One renderer (process pool) per api context, created on first use and closed at shutdown. Kept
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

/** Checks (create, PUT) or renders (instantiate) in the renderer's sandboxed processes; the tenant's processes only (tenantOf). */
export async function runTemplateJob(ctx: ApiContext, identity: Identity, job: CheckJob | RenderJob): Promise<JobResult> {
  try {
    return await rendererFor(ctx).run(job, tenantOf(identity));
  } catch (err) {
    if (err instanceof TemplateRendererBusy) throw templateRendererBusy();
    throw err;
  }
}
