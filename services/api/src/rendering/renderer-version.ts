/** How long the api believes what the renderer registry said. */
export const RENDERER_VERSION_TTL_MS = 2000;

/**
 * The version of a live renderer, read from the registry at most once per `ttlMs` (concurrent
 * callers share the read): every chart render and every sweep asks, and a renderer coming or going
 * is seen within the TTL plus the registry's liveness window. A failed read is not kept.
 */
export function cachedRendererVersion(
  read: () => Promise<string | undefined>,
  ttlMs = RENDERER_VERSION_TTL_MS,
): () => Promise<string | undefined> {
  let cached: { at: number; value: Promise<string | undefined> } | undefined;
  return () => {
    if (cached && Date.now() - cached.at < ttlMs) return cached.value;
    const value = read();
    const entry = { at: Date.now(), value };
    cached = entry;
    value.catch(() => {
      if (cached === entry) cached = undefined;
    });
    return value;
  };
}
