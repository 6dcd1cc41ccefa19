import type { Knex } from 'knex';

// Signed intent (docs/signatures.md): the hub stores and relays what generators sign and what the
// trust root's key holders publish, and can make none of it. Nothing here is checked by the hub;
// every agent with a trust policy checks it in its own cluster.
//
// `signatures`: a generator's signature of a stack's content, stored before the content is posted
// (POST /stacks/{id}/signatures), found again for a deployment object by its stack and content
// digest (yaml_checksum is the SHA-256 of the stored YAML, the statement's subject digest), so no
// deployment-object write changes and an agent woken by a new object finds its signature already
// stored. A work order's signature has no stack: it is found by its work type and the SHA-256 of
// the order's YAML. `version` is what the statement claims (the relay serves the newest first);
// `bundle_sha256` keeps one row per distinct signature.
//
// `trust_metadata`: the root versions (signed by a threshold of root keys), the revocation lists
// and the timestamps, by kind and the version the document claims; re-publishing a version (a
// threshold gathered one holder at a time) replaces it.
const tables = `
CREATE TABLE signatures (
  id bigserial PRIMARY KEY,
  stack_id uuid REFERENCES stacks(id) ON DELETE CASCADE,
  work_type text,
  content_digest text NOT NULL CHECK (content_digest ~ '^[0-9a-f]{64}$'),
  version bigint,
  bundle jsonb NOT NULL,
  bundle_sha256 text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  CHECK ((stack_id IS NULL) <> (work_type IS NULL)),
  UNIQUE (bundle_sha256)
);
CREATE INDEX idx_signatures_stack_content ON signatures (stack_id, content_digest, version DESC, id DESC) WHERE stack_id IS NOT NULL;
CREATE INDEX idx_signatures_work_orders ON signatures (work_type, content_digest, id DESC) WHERE stack_id IS NULL;

CREATE TABLE trust_metadata (
  kind text NOT NULL CHECK (kind IN ('root', 'revocations', 'timestamp')),
  version bigint NOT NULL CHECK (version > 0),
  envelope jsonb NOT NULL,
  published_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (kind, version)
);
`;

export async function up(knex: Knex): Promise<void> {
  await knex.raw(tables);
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
