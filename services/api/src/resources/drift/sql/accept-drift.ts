import type { Queryable } from '@brokkr/db';
import { driftPolicySchema, type DriftIgnoreRule } from '@brokkr/contracts';

/** Ignore rules a policy may hold (driftPolicySchema's bound). */
export const MAX_IGNORE_RULES = 200;

/**
 * Appends an ignore rule to the stack's policy (made with the defaults when the stack has none),
 * in one statement; undefined when the policy already holds MAX_IGNORE_RULES rules.
 */
export async function appendIgnoreRule(db: Queryable, stackId: string, rule: DriftIgnoreRule): Promise<{ rules: number } | undefined> {
  const fresh = driftPolicySchema.parse({ ignore: [rule] });
  const { rows } = await db.query<{ rules: number }>(
    `INSERT INTO stack_drift_policies AS p (stack_id, policy) VALUES ($1, $2::jsonb)
     ON CONFLICT (stack_id) DO UPDATE
       SET policy = jsonb_set(p.policy, '{ignore}', coalesce(p.policy -> 'ignore', '[]'::jsonb) || jsonb_build_array($3::jsonb))
       WHERE jsonb_array_length(coalesce(p.policy -> 'ignore', '[]'::jsonb)) < $4
     RETURNING jsonb_array_length(policy -> 'ignore')::int AS rules`,
    [stackId, JSON.stringify(fresh), JSON.stringify(rule), MAX_IGNORE_RULES],
  );
  return rows[0];
}

/** Closes an open record as accepted by `actor`; false when it was no longer open. */
export async function markAccepted(db: Queryable, id: string, actor: string): Promise<boolean> {
  const { rowCount } = await db.query(
    `UPDATE drift_records SET state = 'accepted', closed_at = greatest(first_seen, now()), accepted_by = $2
      WHERE id = $1 AND state = 'open'`,
    [id, actor],
  );
  return (rowCount ?? 0) > 0;
}
