import type { Queryable } from '@brokkr/db';

/**
 * Removes the registration and, with it, the agent's explicit targets on the generator's live
 * stacks (they required the registration). Returns whether a registration existed.
 */
export async function deleteRegistration(tx: Queryable, agentId: string, generatorId: string): Promise<boolean> {
  const { rowCount } = await tx.query('DELETE FROM agent_generator_registrations WHERE agent_id = $1 AND generator_id = $2', [
    agentId,
    generatorId,
  ]);
  await tx.query(
    `DELETE FROM agent_targets t USING stacks s
      WHERE t.stack_id = s.id AND t.agent_id = $1 AND s.generator_id = $2 AND s.deleted_at IS NULL`,
    [agentId, generatorId],
  );
  return (rowCount ?? 0) > 0;
}
