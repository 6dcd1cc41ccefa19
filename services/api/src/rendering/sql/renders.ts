import type { Queryable } from '@brokkr/db';

/** Of these render keys, the ones already stored: a re-submit of the same inputs renders nothing. */
export async function storedRenderKeys(db: Queryable, keys: readonly string[]): Promise<Set<string>> {
  if (keys.length === 0) return new Set();
  const { rows } = await db.query<{ key: string }>('SELECT key FROM renders WHERE key = ANY($1::text[])', [keys]);
  return new Set(rows.map((r) => r.key));
}

export interface NewRender {
  key: string;
  yaml: string;
  checksum: string;
}

/** Stores renders once per key (a concurrent writer of the same key stores the same bytes). */
export async function insertRenders(db: Queryable, renders: readonly NewRender[], rendererVersion: string): Promise<void> {
  if (renders.length === 0) return;
  await db.query(
    `INSERT INTO renders (key, yaml_content, yaml_checksum, renderer_version)
     SELECT * FROM unnest($1::text[], $2::text[], $3::text[]) AS r(key, yaml, checksum), (SELECT $4::text) v
     ON CONFLICT (key) DO NOTHING`,
    [renders.map((r) => r.key), renders.map((r) => r.yaml), renders.map((r) => r.checksum), rendererVersion],
  );
}

export interface AgentRender {
  agentId: string;
  /** null: it could not be rendered for this agent (`error` says why). */
  key: string | null;
  /** The input's key, rendered or not (null: the input could not even be made, a reference the agent cannot resolve). */
  inputKey: string | null;
  error: string | null;
  layers: string[];
}

/** Which render each agent gets for the object (replacing what it had). */
export async function upsertAgentRenders(db: Queryable, objectId: string, rows: readonly AgentRender[]): Promise<void> {
  if (rows.length === 0) return;
  await db.query(
    `INSERT INTO agent_renders (agent_id, deployment_object_id, render_key, input_key, error, layers)
     SELECT a, $1, k, i, e, l FROM unnest($2::uuid[], $3::text[], $4::text[], $5::text[], $6::jsonb[]) AS x(a, k, i, e, l)
     ON CONFLICT (agent_id, deployment_object_id)
       DO UPDATE SET render_key = EXCLUDED.render_key, input_key = EXCLUDED.input_key, error = EXCLUDED.error,
                     layers = EXCLUDED.layers, rendered_at = now()`,
    [
      objectId,
      rows.map((r) => r.agentId),
      rows.map((r) => r.key),
      rows.map((r) => r.inputKey),
      rows.map((r) => r.error),
      rows.map((r) => JSON.stringify(r.layers)),
    ],
  );
}

/** The object's per-agent renders become exactly these: agents left out get the object as stored again. */
export async function replaceAgentRenders(db: Queryable, objectId: string, rows: readonly AgentRender[]): Promise<void> {
  await db.query('DELETE FROM agent_renders WHERE deployment_object_id = $1 AND NOT (agent_id = ANY($2::uuid[]))', [
    objectId,
    rows.map((r) => r.agentId),
  ]);
  await upsertAgentRenders(db, objectId, rows);
}
