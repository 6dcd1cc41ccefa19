/**
 * `npm start`'s renderer service (services/renderer, docs/adr/0046): it renders the charts and
 * overlays the api queues. It needs the brokkr-render binary, which locateRenderer() builds from
 * tools/renderer on first use (minutes; cached afterwards), so it starts beside the hub rather than
 * before it: plain YAML works meanwhile, a chart or an overlay waits for it (or gets 503
 * renderer_unavailable when it never comes).
 */
import { locateRenderer } from '@brokkr/render';
import { startChild, type Child } from './child.ts';

export interface LocalRendererOptions {
  databaseUrl: string;
  healthPort: number;
  say: (line: string) => void;
  /** Called if the renderer exits on its own. */
  onExit: (code: number | null) => void;
}

export interface LocalRenderer {
  stop(): Promise<void>;
}

/** Starts the renderer once its binary is there; `stop()` may be called at any moment, even mid-build. */
export function startLocalRenderer(options: LocalRendererOptions): LocalRenderer {
  const { say } = options;
  let stopped = false;
  let child: Child | undefined;
  const running = (async () => {
    const binary = await locateRenderer();
    if (stopped) return;
    say(`renderer: brokkr-render ${binary}`);
    child = startChild({
      service: 'renderer',
      env: {
        BROKKR__DATABASE__URL: options.databaseUrl,
        BROKKR__HEALTH__PORT: String(options.healthPort),
        BROKKR__RENDERER__BINARY: binary,
        BROKKR__LOG__FORMAT: process.env.BROKKR__LOG__FORMAT ?? 'text',
      },
      onExit: options.onExit,
    });
  })().catch((err: unknown) => {
    if (!stopped)
      say(
        `renderer: not started (${err instanceof Error ? err.message : String(err)}); charts and overlays are refused with 503 renderer_unavailable, plain YAML works`,
      );
  });
  return {
    async stop() {
      stopped = true;
      await running;
      await child?.stop();
    },
  };
}
