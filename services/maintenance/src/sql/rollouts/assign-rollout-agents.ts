import type { TaskClient } from '../queryable.ts';

/** Records each targeted agent's wave (idempotent: a rollout's agents are assigned once). */
export async function assignRolloutAgents(db: TaskClient, rolloutId: string, waves: ReadonlyMap<string, number>): Promise<void> {
  if (waves.size === 0) return;
  await db.query(
    `INSERT INTO rollout_agents (rollout_id, agent_id, wave)
     SELECT $1, a.agent_id, a.wave FROM unnest($2::uuid[], $3::int[]) AS a(agent_id, wave)
     ON CONFLICT (rollout_id, agent_id) DO NOTHING`,
    [rolloutId, [...waves.keys()], [...waves.values()]],
  );
}
