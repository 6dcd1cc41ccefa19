import type { Knex } from 'knex';

// The charts and kustomize archives deployment objects are rendered from, fetched once at submit
// (@brokkr/sources) and kept by the sha256 of their bytes: the same chart used by many objects,
// stacks or tenants is stored once, and an object that pins a digest renders from exactly those
// bytes for as long as it lives, whatever the repository serves later. `kind` is the first
// fetch's ('helm-chart' or 'kustomize-archive'); the bytes decide what they are.

const tables = `
CREATE TABLE source_blobs (
  digest text PRIMARY KEY,
  kind text NOT NULL,
  bytes bytea NOT NULL,
  size integer NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT valid_source_blob_digest CHECK (digest ~ '^sha256:[0-9a-f]{64}$'),
  CONSTRAINT valid_source_blob_kind CHECK (kind IN ('helm-chart', 'kustomize-archive')),
  CONSTRAINT valid_source_blob_size CHECK (size = octet_length(bytes))
);
-- The pages of a large bytea live in its TOAST table; compressing a .tgz again gains nothing.
ALTER TABLE source_blobs ALTER COLUMN bytes SET STORAGE EXTERNAL;
`;

export async function up(knex: Knex): Promise<void> {
  await knex.raw(tables);
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
