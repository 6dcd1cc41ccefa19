import type { Renderer } from '@brokkr/render';
import type { Engine } from './render.ts';

/** The sandboxed renderer run by this process, reading sources from the content-addressed store. */
export function localEngine(renderer: Renderer, loadBlob: (digest: string) => Promise<Buffer | undefined>): Engine {
  return {
    version: async () => renderer.version,
    async render(tenant, { digest, ...job }) {
      const archive = await loadBlob(digest);
      if (!archive) return { ok: false, reason: 'invalid', error: `the source ${digest} is not in the store` };
      return renderer.render(tenant, { ...job, archive });
    },
  };
}
