import { z } from 'zod';
import { database, health, int, log, telemetry } from '../fields.ts';

/**
 * The renderer service (docs/adr/0046): claims render jobs from PostgreSQL and renders charts and
 * overlays with brokkr-render in sandboxed processes. It needs PostgreSQL only — no NATS: the queue
 * wakes it with NOTIFY — so the pod that runs tenants' charts holds no NATS credentials.
 */
export const rendererConfigSchema = z.object({
  ...database,
  ...log,
  ...telemetry,
  ...health(9104),
  /** The brokkr-render binary (tools/renderer; the image carries it here, scripts/build-renderer.sh builds it for development). */
  BROKKR__RENDERER__BINARY: z.string().min(1).default('/usr/local/bin/brokkr-render'),
  /** Renders at work at once in this replica (each a process of its own, up to MEMORY_MIB and TIMEOUT_SECONDS of CPU). */
  BROKKR__RENDERER__CONCURRENCY: int(2, 1, 64),
  /** Largest rendered output of one chart or overlay (MiB). */
  BROKKR__RENDERER__OUTPUT_MAX_MIB: int(16, 1, 256),
  /** Wall-clock limit of one render (seconds); its CPU limit is the same, and a claim's lease is 5 s longer. */
  BROKKR__RENDERER__TIMEOUT_SECONDS: int(10, 1, 120),
  /** Writable memory of one render process (MiB); the renderer stops itself at half of it. */
  BROKKR__RENDERER__MEMORY_MIB: int(512, 64, 4096),
});
export type RendererConfig = z.output<typeof rendererConfigSchema>;
