import type { Knex } from 'knex';

// A registration's grant: what the generator may place on that agent's cluster (namespaces,
// cluster-scoped kinds, adoption), enforced by the agent before every apply and checked by the
// api when an object is submitted (docs/security.md, "Tenants confined in shared clusters").
// NULL is the default grant (@brokkr/grants resolveGrant): the whole cluster while the generator
// is the agent's only tenant, else its own namespace.
//
// `restricted` says whether the api must check an object of this generator against this agent's
// grant at submit: every registration whose grant does not reach the whole cluster right now. It
// depends on the agent's other registrations (a second tenant ends whole_cluster for both), so
// the triggers below keep it for every writer (admin and agent registrations, approvals, agent
// creation, cascades), and the deployment-object write finds the few restricted agents of a stack
// through a partial index instead of re-deriving the rule per agent. The rule is
// wholeClusterInEffect() of shared/grants/src/defaults.ts; services/api/test/grants.test.ts checks
// that both agree.
//
// A pending request keeps the grant the agent asked for, and the agent's name and cluster as they
// were when it asked: the generator approves what it saw, and a rename voids the request.

const columns = `
ALTER TABLE agent_generator_registrations
  ADD COLUMN registration_grant jsonb,
  ADD COLUMN restricted boolean NOT NULL DEFAULT false;
CREATE INDEX idx_agent_generator_registrations_restricted
  ON agent_generator_registrations (generator_id, agent_id) WHERE restricted;

ALTER TABLE agent_registration_requests
  ADD COLUMN registration_grant jsonb,
  ADD COLUMN agent_name text,
  ADD COLUMN cluster_name text;
UPDATE agent_registration_requests q SET agent_name = a.name, cluster_name = a.cluster_name FROM agents a WHERE a.id = q.agent_id;
ALTER TABLE agent_registration_requests ALTER COLUMN agent_name SET NOT NULL, ALTER COLUMN cluster_name SET NOT NULL;
`;

// A deleted generator's stacks are retired with it; its registrations went on counting as a tenant
// of their agents. Deleting a generator now deletes them (resources/generators/sql/delete-generator.ts).
const retired = `
DELETE FROM agent_generator_registrations r USING generators g WHERE g.id = r.generator_id AND g.deleted_at IS NOT NULL;
DELETE FROM agent_registration_requests q USING generators g WHERE g.id = q.generator_id AND g.deleted_at IS NOT NULL;
`;

const restrictedRule = `
CREATE FUNCTION brokkr_refresh_restricted(agent_ids uuid[]) RETURNS void LANGUAGE sql AS $$
  UPDATE agent_generator_registrations r
     SET restricted = x.restricted
    FROM (
      SELECT r2.id,
             NOT g.is_system
               AND NOT (coalesce((r2.registration_grant ->> 'whole_cluster')::boolean, true) AND t.tenants <= 1) AS restricted
        FROM agent_generator_registrations r2
        JOIN generators g ON g.id = r2.generator_id
        CROSS JOIN LATERAL (
          SELECT count(*) AS tenants
            FROM agent_generator_registrations r3 JOIN generators g3 ON g3.id = r3.generator_id
           WHERE r3.agent_id = r2.agent_id AND NOT g3.is_system AND g3.deleted_at IS NULL
        ) t
       WHERE r2.agent_id = ANY (agent_ids)
    ) x
   WHERE r.id = x.id AND r.restricted IS DISTINCT FROM x.restricted
$$;

CREATE FUNCTION brokkr_registrations_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM brokkr_refresh_restricted(ARRAY(SELECT DISTINCT agent_id FROM new_rows));
  RETURN NULL;
END $$;
CREATE FUNCTION brokkr_registrations_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM brokkr_refresh_restricted(ARRAY(SELECT DISTINCT agent_id FROM old_rows));
  RETURN NULL;
END $$;
CREATE FUNCTION brokkr_registration_grant_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM brokkr_refresh_restricted(ARRAY[NEW.agent_id]);
  RETURN NULL;
END $$;

CREATE TRIGGER agent_generator_registrations_inserted AFTER INSERT ON agent_generator_registrations
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION brokkr_registrations_inserted();
CREATE TRIGGER agent_generator_registrations_deleted AFTER DELETE ON agent_generator_registrations
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION brokkr_registrations_deleted();
-- Only a changed grant: the refresh itself writes nothing but "restricted", so it never fires this.
CREATE TRIGGER agent_generator_registrations_grant_changed AFTER UPDATE OF registration_grant ON agent_generator_registrations
  FOR EACH ROW EXECUTE FUNCTION brokkr_registration_grant_changed();

SELECT brokkr_refresh_restricted(ARRAY(SELECT DISTINCT agent_id FROM agent_generator_registrations));
`;

export async function up(knex: Knex): Promise<void> {
  await knex.raw(columns);
  await knex.raw(retired);
  await knex.raw(restrictedRule);
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
