export { createRenderer } from './renderer.ts';
export { locateRenderer } from './locate.ts';
export { FairQueue } from './fair-queue.ts';
export {
  DEFAULT_LIMITS,
  type Isolation,
  type RenderFailureReason,
  type RenderJob,
  type RenderLimits,
  type RenderResult,
  type Renderer,
  type RendererOptions,
} from './types.ts';
