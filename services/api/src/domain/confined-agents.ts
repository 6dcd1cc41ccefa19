import type { GrantInput } from '@brokkr/contracts';
import type { Queryable } from '@brokkr/db';
import { agentsForOneStackSql } from './agents-for-stacks.ts';

/** An agent of the stack whose grant for the stack's generator does not reach the whole cluster. */
export interface ConfinedAgent {
  agent_id: string;
  agent_name: string;
  generator_id: string;
  generator_name: string;
  grant: GrantInput | null;
  /** The agent's other tenants: a namespace policy goes only where none of them is granted. */
  others: { generator_id: string; generator_name: string; grant: GrantInput | null }[];
}

/**
 * The agents in `wake` (the stack's agents) whose grant for the stack's generator does not reach
 * the whole cluster, with their other tenants' grants: what placement-check.ts judges. Reads the
 * CTEs `stack` (id, generator_id) and `wake` (id); the partial index on restricted registrations
 * finds the few there are (migration 0021).
 */
export const CONFINED_AGENTS_SELECT = `
     SELECT r.agent_id, ag.name AS agent_name, g.id AS generator_id, g.name AS generator_name, r.registration_grant AS grant,
            (SELECT coalesce(jsonb_agg(jsonb_build_object('generator_id', g2.id, 'generator_name', g2.name,
                                                          'grant', r2.registration_grant)), '[]')
               FROM agent_generator_registrations r2 JOIN generators g2 ON g2.id = r2.generator_id
              WHERE r2.agent_id = r.agent_id AND r2.generator_id <> r.generator_id
                AND NOT g2.is_system AND g2.deleted_at IS NULL) AS others
       FROM stack
       JOIN generators g ON g.id = stack.generator_id
       JOIN agent_generator_registrations r ON r.generator_id = stack.generator_id AND r.restricted
       JOIN agents ag ON ag.id = r.agent_id
      WHERE r.agent_id IN (SELECT id FROM wake)`;

/** The stack's confined agents now (an override layer changes what they would be served). */
export async function confinedAgentsOfStack(db: Queryable, stackId: string): Promise<ConfinedAgent[]> {
  const { rows } = await db.query<ConfinedAgent>(
    `WITH stack AS (SELECT id, generator_id FROM stacks WHERE id = $1 AND deleted_at IS NULL),
          wake AS (${agentsForOneStackSql('$1::uuid')})
     ${CONFINED_AGENTS_SELECT}`,
    [stackId],
  );
  return rows;
}
