import type { z } from 'zod';
import type { newWorkOrderSchema } from '@brokkr/contracts';
import { errorKind, raising } from '../../errors/api-error.ts';
import { isValidTag } from '../../domain/labels/validity.ts';
import type { NewWorkOrderFields } from './sql/create-work-order.ts';

export const invalidWorkOrder = errorKind(400, 'invalid_work_order', 'Invalid work order');
export const noTargetingSpecified = errorKind(
  400,
  'no_targeting_specified',
  'A work order needs at least one of targeting.agent_ids, targeting.labels, targeting.annotations (or target_agent_ids)',
);

const INT32_MAX = 2147483647;
/** work_orders.work_type is varchar(50); longer would be a database error. */
const WORK_TYPE_MAX = 50;

function count(
  body: z.output<typeof newWorkOrderSchema>,
  key: 'max_retries' | 'backoff_seconds' | 'claim_timeout_seconds',
  fallback: number,
  min: number,
): number {
  const value = body[key] ?? fallback;
  if (value < min || value > INT32_MAX) throw invalidWorkOrder.with(`${key} must be between ${min} and ${INT32_MAX}`, { field: key });
  return value;
}

/**
 * POST /work-orders' body → what is stored: defaults max_retries 3, backoff 60 s,
 * claim timeout 3600 s; legacy target_agent_ids merged into targeting.agent_ids; duplicates
 * removed; unusable labels and annotations dropped. At least one targeting method must remain.
 */
export const workOrderInput = raising(
  (body: z.output<typeof newWorkOrderSchema>): NewWorkOrderFields => {
    if (body.work_type.trim() === '') throw invalidWorkOrder.with('work_type must not be blank', { field: 'work_type' });
    if (body.work_type.length > WORK_TYPE_MAX) {
      throw invalidWorkOrder.with(`work_type must be at most ${WORK_TYPE_MAX} characters`, { field: 'work_type' });
    }
    if (body.yaml_content.trim() === '') throw invalidWorkOrder.with('yaml_content must not be blank', { field: 'yaml_content' });
    const fields = {
      workType: body.work_type,
      yamlContent: body.yaml_content,
      maxRetries: count(body, 'max_retries', 3, 0),
      backoffSeconds: count(body, 'backoff_seconds', 60, 1),
      claimTimeoutSeconds: count(body, 'claim_timeout_seconds', 3600, 1),
    };
    const targeting = body.targeting ?? {};
    const agentIds = [...new Set([...(targeting.agent_ids ?? []), ...(body.target_agent_ids ?? [])].map((id) => id.toLowerCase()))];
    // Brokkr drops (silently) labels and annotation parts that break the rule every stored label keeps.
    const labels = [...new Set((targeting.labels ?? []).filter(isValidTag))];
    const annotations = Object.entries(targeting.annotations ?? {}).filter(([k, v]) => isValidTag(k) && isValidTag(v));
    if (agentIds.length + labels.length + annotations.length === 0) throw noTargetingSpecified();
    return { ...fields, agentIds, labels, annotations };
  },
  invalidWorkOrder,
  noTargetingSpecified,
);
