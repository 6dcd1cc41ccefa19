import type { Queryable } from '@brokkr/db';

/** Labels, annotations and explicit targets of an agent: the agent side of targeting (contract §4). */

export interface AgentLabelRow {
  id: string;
  agent_id: string;
  label: string;
}

export interface AgentAnnotationRow {
  id: string;
  agent_id: string;
  key: string;
  value: string;
}

export interface AgentTargetRow {
  id: string;
  agent_id: string;
  stack_id: string;
}

export async function listLabels(db: Queryable, agentId: string): Promise<AgentLabelRow[]> {
  const { rows } = await db.query<AgentLabelRow>('SELECT id, agent_id, label FROM agent_labels WHERE agent_id = $1 ORDER BY label, id', [
    agentId,
  ]);
  return rows;
}

/** Unknown agent → FK violation (422); duplicate → unique violation `agent_labels_agent_id_label_key` (409). */
export async function insertLabel(tx: Queryable, agentId: string, label: string): Promise<AgentLabelRow> {
  const { rows } = await tx.query<AgentLabelRow>(
    'INSERT INTO agent_labels (agent_id, label) VALUES ($1, $2) RETURNING id, agent_id, label',
    [agentId, label],
  );
  return rows[0]!;
}

export async function deleteLabel(tx: Queryable, agentId: string, label: string): Promise<boolean> {
  const { rowCount } = await tx.query('DELETE FROM agent_labels WHERE agent_id = $1 AND label = $2', [agentId, label]);
  return (rowCount ?? 0) > 0;
}

export async function listAnnotations(db: Queryable, agentId: string): Promise<AgentAnnotationRow[]> {
  const { rows } = await db.query<AgentAnnotationRow>(
    'SELECT id, agent_id, key, value FROM agent_annotations WHERE agent_id = $1 ORDER BY key, id',
    [agentId],
  );
  return rows;
}

export async function insertAnnotation(tx: Queryable, agentId: string, key: string, value: string): Promise<AgentAnnotationRow> {
  const { rows } = await tx.query<AgentAnnotationRow>(
    'INSERT INTO agent_annotations (agent_id, key, value) VALUES ($1, $2, $3) RETURNING id, agent_id, key, value',
    [agentId, key, value],
  );
  return rows[0]!;
}

export async function deleteAnnotation(tx: Queryable, agentId: string, key: string): Promise<boolean> {
  const { rowCount } = await tx.query('DELETE FROM agent_annotations WHERE agent_id = $1 AND key = $2', [agentId, key]);
  return (rowCount ?? 0) > 0;
}

export async function listTargets(db: Queryable, agentId: string): Promise<AgentTargetRow[]> {
  const { rows } = await db.query<AgentTargetRow>('SELECT id, agent_id, stack_id FROM agent_targets WHERE agent_id = $1 ORDER BY stack_id', [
    agentId,
  ]);
  return rows;
}

export async function insertTarget(tx: Queryable, agentId: string, stackId: string): Promise<AgentTargetRow> {
  const { rows } = await tx.query<AgentTargetRow>(
    'INSERT INTO agent_targets (agent_id, stack_id) VALUES ($1, $2) RETURNING id, agent_id, stack_id',
    [agentId, stackId],
  );
  return rows[0]!;
}

export async function deleteTarget(tx: Queryable, agentId: string, stackId: string): Promise<boolean> {
  const { rowCount } = await tx.query('DELETE FROM agent_targets WHERE agent_id = $1 AND stack_id = $2', [agentId, stackId]);
  return (rowCount ?? 0) > 0;
}

/** What the target create/remove checks need, in one read: the live stack's owner and the agent's consent. */
export async function stackForTargeting(
  db: Queryable,
  stackId: string,
  agentId: string,
): Promise<{ generator_id: string; registered: boolean } | undefined> {
  const { rows } = await db.query<{ generator_id: string; registered: boolean }>(
    `SELECT s.generator_id,
            EXISTS (SELECT 1 FROM agent_generator_registrations r
                     WHERE r.agent_id = $2 AND r.generator_id = s.generator_id) AS registered
       FROM stacks s WHERE s.id = $1 AND s.deleted_at IS NULL`,
    [stackId, agentId],
  );
  return rows[0];
}
