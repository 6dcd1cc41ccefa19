import { z } from 'zod';
import { longPollWait, queryBool, uuid } from '../../http/schemas.ts';

/** The request and response shapes are @brokkr/contracts' (work-orders.ts); only the query strings are the api's. */
export {
  claimWorkOrderSchema,
  completeWorkOrderSchema,
  newWorkOrderSchema,
  retryScheduledSchema,
  workOrderLogSchema,
  workOrderSchema,
} from '@brokkr/contracts';

export const workOrderListQuery = z.object({
  status: z.string().optional().meta({ description: '`PENDING`, `CLAIMED` or `RETRY_PENDING`' }),
  work_type: z.string().optional(),
});

export const workOrderLogQuery = z.object({
  work_type: z.string().optional(),
  success: queryBool().optional(),
  agent_id: uuid().optional().meta({ description: 'The agent that claimed the order' }),
  limit: z
    .string()
    .regex(/^\d{1,9}$/, 'must be a whole number')
    .transform(Number)
    .optional()
    .meta({ type: 'string', description: 'At most this many entries (no default)' }),
});

export const pendingQuery = z.object({
  work_type: z.string().optional(),
  wait: longPollWait(
    'Long-poll (extension): when no order is pending, hold the request up to this many seconds ' +
      '(capped by BROKKR__BROKER__LONG_POLL_MAX_SECONDS) until one is',
  ),
});
