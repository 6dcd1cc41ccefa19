import type { Knex } from 'knex';

// Approvals on rollout waves (docs/rollouts.md, "Approvals"). A wave of a rollout policy may
// require approvals before it is released; an approval counts only for the rollout it was given
// to, the wave it names, and the digest of what that wave will ship, and only until it expires.
//
// The digest is what the agents of the wave would be served: the deployment object's content
// (yaml_checksum) and the stack's override layers (layers_revision counts every change of them,
// migration 0026; an agent's render is keyed by both). A new deployment object opens a new rollout
// (migration 0014), so its count starts at zero; a changed layer changes the digest, so approvals
// given before it stop counting. brokkr_rollout_digest is the one definition: the api (which
// stores and counts approvals and releases the wave whose count they complete) and maintenance
// (whose rollouts task stops before a wave that lacks them) both call it.
//
// deployment_objects.submitted_by records who submitted an object ('admin' or the generator's
// id), so that the submitter is refused as an approver of its own object; null for objects stored
// before this column (the api then takes the stack's owner for the submitter: only the owner or an
// admin can submit).
//
// rollouts.approval_wave is the wave a rollout waits at: every gate before it passed and it lacks
// approvals. maintenance sets it (and sends approval.requested once); the approval that completes
// the count releases the wave in its own transaction, under the rollout's row lock, which is also
// what the rollouts task takes: the two never both decide.

const pinSearchPath = `SELECT set_config('search_path', quote_ident(current_schema()) || ', public', true)`;

const tables = `
ALTER TABLE deployment_objects ADD COLUMN submitted_by text;

ALTER TABLE rollouts
  ADD COLUMN approval_wave integer,
  ADD COLUMN approval_requested_at timestamptz;

CREATE TABLE rollout_approvals (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  rollout_id uuid NOT NULL REFERENCES rollouts (id) ON DELETE CASCADE,
  wave integer NOT NULL,
  digest text NOT NULL,
  approver_type text NOT NULL,
  approver_id uuid,
  -- 'admin' or the generator's id: one approval per approver, wave and digest (a second one renews it).
  approver text NOT NULL,
  comment text,
  created_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL,
  CONSTRAINT rollout_approvals_approver_type_check CHECK (approver_type IN ('admin', 'generator')),
  UNIQUE (rollout_id, wave, digest, approver)
);
`;

const functions = `
CREATE FUNCTION brokkr_rollout_digest(p_rollout uuid) RETURNS text LANGUAGE sql STABLE
SET search_path FROM CURRENT AS $$
  SELECT 'sha256:' || encode(sha256(convert_to(o.yaml_checksum || ':' || s.layers_revision::text, 'UTF8')), 'hex')
    FROM rollouts r
    JOIN deployment_objects o ON o.id = r.deployment_object_id
    JOIN stacks s ON s.id = r.stack_id
   WHERE r.id = p_rollout
$$;

CREATE FUNCTION brokkr_rollout_approvals(p_rollout uuid, p_wave integer) RETURNS integer LANGUAGE sql STABLE
SET search_path FROM CURRENT AS $$
  SELECT count(*)::int FROM rollout_approvals a
   WHERE a.rollout_id = p_rollout AND a.wave = p_wave AND a.expires_at > now()
     AND a.digest = brokkr_rollout_digest(p_rollout)
$$;
`;

export async function up(knex: Knex): Promise<void> {
  await knex.raw(pinSearchPath);
  await knex.raw(tables);
  await knex.raw(functions);
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
