import type { AuditRecord } from '@brokkr/contracts';
import { eventTypeColumnsSql, insertEnvelopesSql, isoTimestampSql as iso, type OutboxRow } from '@brokkr/outbox';
import type { TaskClient } from './queryable.ts';

/**
 * What a stack-expiry statement wrote: the outbox rows (to publish now), the audit entries, and
 * the agents to wake (those associated with a deleted stack, which now serve its deletion marker).
 */
export interface ExpiryChange {
  count: number;
  events: OutboxRow[];
  audit: AuditRecord[];
  agentIds: string[];
}

// Event envelopes are built in SQL so that the outbox row is written by the statement that
// changes the stack: a crash after commit loses no event (the outbox relay publishes it), and a
// second run, finding nothing due, writes none. The envelope is @brokkr/outbox's, as the api's.
const outboxInsert = (events: string) =>
  insertEnvelopesSql(
    { id: 'e.id', eventType: 'e.event_type', subject: 'e.subject', timestamp: iso('now()'), data: 'e.data', headers: 'NULL' },
    { from: `${events} e`, orderBy: 'e.ord', returning: 'id, event_type, subject, payload, headers' },
  );

// brokkr_stack_agents (migration 0014) is the association rule read from the stack side (same
// rule as services/api/src/domain/association.ts). Called
// in the deleting statement, it sees the statement's snapshot: the stacks' labels, annotations
// and targets as they were, which the soft delete does not touch anyway.
const CHANGED_STACKS_AGENTS = `ARRAY(SELECT DISTINCT sa.agent_id::text FROM changed c CROSS JOIN LATERAL brokkr_stack_agents(c.id) sa)`;
const NO_AGENTS = `'{}'::text[]`;

const resultSelect = (agentIds: string) => `
  SELECT (SELECT count(*) FROM changed)::int AS count,
         (SELECT coalesce(jsonb_agg(to_jsonb(o)), '[]') FROM outboxed o) AS events,
         (SELECT coalesce(jsonb_agg(to_jsonb(a)), '[]') FROM audited a) AS audit,
         ${agentIds} AS "agentIds"`;

const expiringData = `jsonb_build_object('stack_id', c.id, 'name', c.name, 'expires_at', ${iso('c.expires_at')})`;

/**
 * `stack.expiring`, once per expiry: live stacks whose expires_at falls within `warningSeconds`
 * and that were not announced since their expiry was last set. SKIP LOCKED plus the re-check of
 * expiry_announced_at in the UPDATE make a concurrent run (another replica) announce nothing twice.
 */
export async function announceExpiringStacks(db: TaskClient, warningSeconds: number, limit: number): Promise<ExpiryChange> {
  const { rows } = await db.query<ExpiryChange>(
    `WITH due AS (
       SELECT id FROM stacks
        WHERE deleted_at IS NULL AND expires_at IS NOT NULL AND expiry_announced_at IS NULL
          AND expires_at <= now() + make_interval(secs => $1)
        ORDER BY expires_at
        LIMIT $2
        FOR UPDATE SKIP LOCKED
     ), changed AS (
       UPDATE stacks s SET expiry_announced_at = now()
         FROM due WHERE s.id = due.id AND s.expiry_announced_at IS NULL AND s.deleted_at IS NULL
       RETURNING s.id, s.name, s.expires_at
     ), events AS (
       SELECT gen_random_uuid() AS id, ${eventTypeColumnsSql('stack.expiring')}, ${expiringData} AS data, 1 AS ord FROM changed c
     ), outboxed AS (${outboxInsert('events')}),
     audited AS (SELECT NULL::int WHERE false)
     ${resultSelect(NO_AGENTS)}`,
    [warningSeconds, limit],
  );
  return rows[0]!;
}

/**
 * Deletes live stacks whose expires_at has passed, as DELETE /stacks/{id} does (soft delete; the
 * stack trigger retires the objects and inserts the deletion marker the agents prune on), with
 * `stack.expiring` first when it was never sent (an expiry shorter than a tick), then
 * `stack.expired` and `stack.deleted`, and the audit entry — all in this one statement, so a
 * stack expires exactly once whatever the number of replicas and crashes.
 */
export async function expireDueStacks(db: TaskClient, limit: number): Promise<ExpiryChange> {
  const { rows } = await db.query<ExpiryChange>(
    `WITH due AS (
       SELECT id, expiry_announced_at FROM stacks
        WHERE deleted_at IS NULL AND expires_at IS NOT NULL AND expires_at <= now()
        ORDER BY expires_at
        LIMIT $1
        FOR UPDATE SKIP LOCKED
     ), changed AS (
       UPDATE stacks s SET deleted_at = now(), expiry_announced_at = coalesce(s.expiry_announced_at, now())
         FROM due WHERE s.id = due.id AND s.deleted_at IS NULL AND s.expires_at <= now()
       RETURNING s.id, s.name, s.expires_at, s.deleted_at, due.expiry_announced_at IS NULL AS unannounced
     ), events AS (
       SELECT gen_random_uuid() AS id, ${eventTypeColumnsSql('stack.expiring')}, ${expiringData} AS data, 1 AS ord
         FROM changed c WHERE c.unannounced
       UNION ALL
       SELECT gen_random_uuid(), ${eventTypeColumnsSql('stack.expired')},
              jsonb_build_object('stack_id', c.id, 'name', c.name, 'expires_at', ${iso('c.expires_at')}, 'deleted_at', ${iso('c.deleted_at')}), 2
         FROM changed c
       UNION ALL
       SELECT gen_random_uuid(), ${eventTypeColumnsSql('stack.deleted')}, jsonb_build_object('stack_id', c.id, 'deleted_at', ${iso('c.deleted_at')}), 3
         FROM changed c
     ), outboxed AS (${outboxInsert('events')}),
     audited AS (
       INSERT INTO audit_logs (id, timestamp, actor_type, actor_id, action, resource_type, resource_id, details)
       SELECT gen_random_uuid(), now(), 'system', NULL, 'stack.expired', 'stack', c.id,
              jsonb_build_object('name', c.name, 'expires_at', c.expires_at)
         FROM changed c
       RETURNING id, timestamp, actor_type, actor_id, action, resource_type, resource_id, details, ip_address, user_agent
     )
     ${resultSelect(CHANGED_STACKS_AGENTS)}`,
    [limit],
  );
  return rows[0]!;
}
