import type { Queryable } from '@brokkr/db';

export interface RendererRegistration {
  /** This process: a random id per start. */
  id: string;
  /** `brokkr-render --version`: what the api keys renders by. */
  version: string;
  /** How its processes are walled in (@brokkr/render's probe), for an operator reading the table. */
  isolation: unknown;
  concurrency: number;
}

/**
 * (none) → alive, or alive → seen again; by the renderer at start and every heartbeat. One upsert:
 * the first call inserts the row (started_at: the api prefers the newest renderer's version during
 * a rolling upgrade), every later one moves last_seen.
 */
export async function registerRenderer(db: Queryable, renderer: RendererRegistration): Promise<void> {
  await db.query(
    `INSERT INTO renderers (id, version, isolation, concurrency) VALUES ($1, $2, $3, $4)
     ON CONFLICT (id) DO UPDATE SET last_seen = now()`,
    [renderer.id, renderer.version, JSON.stringify(renderer.isolation), renderer.concurrency],
  );
}
