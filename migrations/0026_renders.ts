import type { Knex } from 'knex';

// Per-cluster content (docs/renders.md): a deployment object may come from a Helm chart or a
// Kustomize overlay (its source, pinned to a digest in source_blobs, and its values), and a stack
// may have override layers that change values or patch the rendered objects for the agents they
// select. Each agent is served its own render; a render is stored once per distinct input (its key
// is the hash of everything that went into it) and shared by every agent with that input, so 1,000
// agents in 4 capability classes cost 4 renders and 4 rows. The output lives here, in PostgreSQL:
// no message or CRD size limit applies.
//
// rendered_objects lists the objects each agent gets its own render of (a chart, an overlay, or
// plain YAML on a stack with override layers; deployment objects are immutable, so the mark lives
// beside them): its source and values, null for plain YAML. Every other object is served as stored.
// agent_renders says which render an agent gets for such an object. An agent without a row (it was
// targeted after the object was rendered, until rendering's sweep makes it) or with a row without a
// render_key (its render failed) is served nothing of that stack: never a partial apply, never
// someone else's render. input_key is the key of the input the row was last made from, so a render
// that failed is not tried again until its input changes. `layers` says which override layers
// applied (GET …/explain).
//
// agents.facts is what an agent reports about its cluster with its heartbeat (Kubernetes version,
// API versions): the Capabilities a chart is rendered with.

const sql = `
ALTER TABLE agents ADD COLUMN facts jsonb;

CREATE TABLE rendered_objects (
  deployment_object_id uuid PRIMARY KEY REFERENCES deployment_objects (id) ON DELETE CASCADE,
  source jsonb,
  source_values jsonb
);

-- has_layers and layers_revision live on the stack row so that a new object's one-statement insert,
-- which locks the stack FOR SHARE, sees an override write that committed while it waited (READ
-- COMMITTED re-reads the locked row, not other tables): it inserts a plain object only while the
-- stack has no layers, a rendered one only if the layers it was rendered with are still current.
ALTER TABLE stacks
  ADD COLUMN has_layers boolean NOT NULL DEFAULT false,
  ADD COLUMN layers_revision bigint NOT NULL DEFAULT 0;

CREATE TABLE stack_overrides (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  stack_id uuid NOT NULL REFERENCES stacks (id) ON DELETE CASCADE,
  name text NOT NULL,
  priority integer NOT NULL DEFAULT 0,
  selector jsonb NOT NULL DEFAULT '{}',
  layer_values jsonb,
  patches jsonb,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (stack_id, name)
);

CREATE TABLE renders (
  key text PRIMARY KEY,
  yaml_content text NOT NULL,
  yaml_checksum text NOT NULL,
  renderer_version text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE agent_renders (
  agent_id uuid NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
  deployment_object_id uuid NOT NULL REFERENCES deployment_objects (id) ON DELETE CASCADE,
  render_key text REFERENCES renders (key),
  input_key text,
  error text,
  layers jsonb NOT NULL DEFAULT '[]',
  rendered_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (agent_id, deployment_object_id)
);
CREATE INDEX idx_agent_renders_object ON agent_renders (deployment_object_id, render_key);
`;

export async function up(knex: Knex): Promise<void> {
  await knex.raw(sql);
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
