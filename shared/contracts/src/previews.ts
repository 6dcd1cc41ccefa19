import { z } from 'zod';
import { timestamp, uuid } from './wire.ts';

/**
 * Fleet-wide diff preview: proposed YAML for a stack, never served as target
 * state. Every agent targeted when it was created runs a server-side dry-run apply against its
 * cluster and reports one result; the hub aggregates them per agent. The hub serves these shapes,
 * the agent and the CLI read and write them; all import them from here.
 */

/** What applying the preview would do to one object. */
export const PREVIEW_ACTIONS = ['created', 'changed', 'unchanged', 'pruned'] as const;
export type PreviewAction = (typeof PREVIEW_ACTIONS)[number];

/** An agent's verdict: `pending` until it reports; `expired` when it never did before the preview's expiry. */
export const PREVIEW_AGENT_STATUSES = ['pending', 'clean', 'changes', 'error', 'expired'] as const;
export type PreviewAgentStatus = (typeof PREVIEW_AGENT_STATUSES)[number];

/** Bounds that keep a result compact (a preview of a big stack on a big fleet stays readable). */
export const PREVIEW_LIMITS = {
  /** Objects per agent result (documents in the preview plus pruned live objects). */
  objects: 5000,
  /** Changed paths listed per object; more sets `diff_truncated`. */
  diffPaths: 50,
  /** A before/after value is cut to this many characters. */
  valueChars: 200,
  /** Error and note messages. */
  messageChars: 4000,
  /** A preview is handed out to agents for this long after creation. */
  ttlMinutes: 15,
} as const;

const message = () => z.string().max(PREVIEW_LIMITS.messageChars);
const value = () =>
  z
    .string()
    .max(PREVIEW_LIMITS.valueChars + 1)
    .nullable();

export const previewFieldChangeSchema = z
  .object({
    path: z
      .string()
      .min(1)
      .max(1000)
      .meta({ description: 'Dotted path, e.g. `spec.replicas` or `spec.template.spec.containers[0].image`' }),
    before: value().meta({ description: 'The live value (JSON, cut short); null when absent or withheld (Secret data)' }),
    after: value().meta({ description: 'The value after apply (JSON, cut short); null when removed or withheld' }),
  })
  .meta({ id: 'PreviewFieldChange' });
export type PreviewFieldChange = z.output<typeof previewFieldChangeSchema>;

export const previewObjectResultSchema = z
  .object({
    api_version: z.string().max(255),
    kind: z.string().max(255),
    namespace: z.string().max(255).nullable(),
    name: z.string().max(255),
    action: z.enum(PREVIEW_ACTIONS).nullable().meta({ description: 'null when an error kept the agent from knowing' }),
    diff: previewFieldChangeSchema.array().max(PREVIEW_LIMITS.diffPaths),
    diff_truncated: z.boolean().default(false),
    error: message().nullable().default(null).meta({ description: 'The admission or schema error of the dry run' }),
    note: message().nullable().default(null).meta({ description: 'Why the object could not be fully checked (e.g. its namespace is new)' }),
  })
  .meta({ id: 'PreviewObjectResult' });
export type PreviewObjectResult = z.output<typeof previewObjectResultSchema>;

/** What the agent posts: per object, plus an error that kept it from checking the stack at all. */
export const submitPreviewResultSchema = z
  .object({
    objects: previewObjectResultSchema.array().max(PREVIEW_LIMITS.objects),
    error: message().nullable().optional(),
  })
  .meta({ id: 'SubmitPreviewResult' });
export type SubmitPreviewResult = z.input<typeof submitPreviewResultSchema>;

/** A preview as an agent fetches it (GET /agents/{id}/previews/pending). */
export const pendingPreviewSchema = z
  .object({
    id: uuid(),
    stack_id: uuid(),
    yaml_content: z.string(),
    is_deletion_marker: z.boolean(),
    created_at: timestamp(),
    expires_at: timestamp(),
  })
  .meta({ id: 'PendingPreview' });
export type PendingPreview = z.output<typeof pendingPreviewSchema>;

export const previewSummaryCountsSchema = z
  .object({
    agents: z.number().int(),
    pending: z.number().int(),
    clean: z.number().int(),
    changes: z.number().int(),
    error: z.number().int(),
    expired: z.number().int(),
  })
  .meta({ id: 'PreviewCounts' });

export const previewAgentResultSchema = z
  .object({
    agent_id: uuid(),
    agent_name: z.string().nullable(),
    cluster_name: z.string().nullable(),
    status: z.enum(PREVIEW_AGENT_STATUSES),
    reported_at: timestamp().nullable(),
    error: z.string().nullable(),
    objects: previewObjectResultSchema.array(),
  })
  .meta({ id: 'PreviewAgentResult' });
export type PreviewAgentResult = z.output<typeof previewAgentResultSchema>;

const previewFields = {
  id: uuid(),
  stack_id: uuid(),
  is_deletion_marker: z.boolean(),
  created_by: z.string().nullable(),
  created_at: timestamp(),
  expires_at: timestamp(),
  status: z.enum(['pending', 'completed']).meta({ description: '`completed` once every targeted agent reported or the preview expired' }),
  counts: previewSummaryCountsSchema,
};

export const previewSummarySchema = z.object(previewFields).meta({ id: 'PreviewSummary' });
export type PreviewSummary = z.output<typeof previewSummarySchema>;

export const previewSchema = z.object({ ...previewFields, agents: previewAgentResultSchema.array() }).meta({ id: 'Preview' });
export type Preview = z.output<typeof previewSchema>;
