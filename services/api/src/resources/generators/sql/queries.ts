import type { GrantInput } from '@brokkr/contracts';
import type { Queryable } from '@brokkr/db';
import { GENERATOR_COLUMNS, type GeneratorRow } from './generator-row.ts';

/** The read-only statements of generators and their agent registrations. */

export interface RegistrationRow {
  id: string;
  agent_id: string;
  generator_id: string;
  registered_at: Date;
  /** As stored: NULL for the default grant (resolveGrant fills it in). */
  registration_grant: GrantInput | null;
}

/** The columns of a RegistrationRow, for every statement that returns one. */
export const REGISTRATION_COLUMNS = 'id, agent_id, generator_id, registered_at, registration_grant';

export async function listTenantGenerators(db: Queryable): Promise<GeneratorRow[]> {
  const { rows } = await db.query<GeneratorRow>(
    `SELECT ${GENERATOR_COLUMNS} FROM generators WHERE deleted_at IS NULL AND NOT is_system ORDER BY created_at, id`,
  );
  return rows;
}

export async function findLiveGenerator(db: Queryable, id: string): Promise<GeneratorRow | undefined> {
  const { rows } = await db.query<GeneratorRow>(`SELECT ${GENERATOR_COLUMNS} FROM generators WHERE id = $1 AND deleted_at IS NULL`, [id]);
  return rows[0];
}

/** Agents whose target state depends on the generator: registered with it, or targeting its live stacks. */
export async function agentsAffectedByGenerator(tx: Queryable, generatorId: string): Promise<string[]> {
  const { rows } = await tx.query<{ agent_id: string }>(
    `SELECT agent_id FROM agent_generator_registrations WHERE generator_id = $1
     UNION
     SELECT t.agent_id FROM agent_targets t JOIN stacks s ON s.id = t.stack_id
      WHERE s.generator_id = $1 AND s.deleted_at IS NULL`,
    [generatorId],
  );
  return rows.map((r) => r.agent_id);
}

export async function liveAgentExists(db: Queryable, agentId: string): Promise<boolean> {
  const { rowCount } = await db.query('SELECT 1 FROM agents WHERE id = $1 AND deleted_at IS NULL', [agentId]);
  return rowCount === 1;
}

/** The live agents registered with a generator. */
export async function listRegistrations(db: Queryable, generatorId: string): Promise<RegistrationRow[]> {
  const { rows } = await db.query<RegistrationRow>(
    `SELECT r.id, r.agent_id, r.generator_id, r.registered_at, r.registration_grant
       FROM agent_generator_registrations r JOIN agents a ON a.id = r.agent_id
      WHERE r.generator_id = $1 AND a.deleted_at IS NULL
      ORDER BY r.registered_at, r.id`,
    [generatorId],
  );
  return rows;
}

/** The generators an agent is registered with. */
export async function listAgentRegistrations(db: Queryable, agentId: string): Promise<RegistrationRow[]> {
  const { rows } = await db.query<RegistrationRow>(
    `SELECT ${REGISTRATION_COLUMNS} FROM agent_generator_registrations
      WHERE agent_id = $1 ORDER BY registered_at, id`,
    [agentId],
  );
  return rows;
}
