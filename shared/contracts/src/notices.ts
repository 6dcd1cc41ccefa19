import { z } from 'zod';

/**
 * Payloads of the core NATS subjects (no persistence, hints only; docs/nats-subjects.md). A lost
 * or malformed notice only delays work that a timer also does, so receivers parse leniently.
 */

/**
 * `brokkr.notify.agent.<agent_id>`: the agent's target state (or its pending work orders) may have
 * changed. The optional fields say why, when the write knew; the WebSocket agent channel picks its
 * hint frame from them (`work_order`, `stack_changed`, else `target_changed`) and skips `ack`
 * notices (the agent's own event report: only its incremental long-poll needs waking).
 */
export const agentNoticeSchema = z.object({
  agent_id: z.guid(),
  work_order_id: z.guid().optional(),
  stack_id: z.guid().optional(),
  /** With `stack_id`: the new object's sequence_id, so a replica knows whether a read of the stack it already made has it. */
  sequence_id: z.number().int().optional(),
  ack: z.boolean().optional(),
  /**
   * With `stack_id`: a signature was stored for content the stack already holds (re-signed, say,
   * after a revocation); nothing the agent is served changed but that signature.
   */
  signature: z.boolean().optional(),
});
export type AgentNotice = z.output<typeof agentNoticeSchema>;

/** `brokkr.notify.deliveries`: deliveries are due; maintenance says why. */
export const deliveriesDueNoticeSchema = z.object({
  source: z.string().optional(),
  released_leases: z.number().int().optional(),
  requeued_retries: z.number().int().optional(),
});
export type DeliveriesDueNotice = z.output<typeof deliveriesDueNoticeSchema>;

/** `brokkr.cache.invalidate.pak`: drop one cached PAK hash, or all of them. */
export const pakInvalidationSchema = z.union([z.object({ hash: z.string() }), z.object({ all: z.literal(true) })]);
export type PakInvalidation = z.output<typeof pakInvalidationSchema>;

/** `brokkr.cache.invalidate.webhooks`: a subscription changed (or all of them, without an id). */
export const webhookInvalidationSchema = z.object({ id: z.guid().optional() });
export type WebhookInvalidation = z.output<typeof webhookInvalidationSchema>;

/** `brokkr.config.reload`: re-read your configuration sources; the changes are informational. */
export const configReloadNoticeSchema = z.object({
  reloaded_at: z.string(),
  /** Who asked, e.g. `api`. */
  source: z.string(),
  changes: z.array(z.object({ key: z.string(), old_value: z.string(), new_value: z.string() })).optional(),
});
export type ConfigReloadNotice = z.output<typeof configReloadNoticeSchema>;
