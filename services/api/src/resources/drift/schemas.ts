import { z } from 'zod';
import { DRIFT_GROUPINGS, DRIFT_STATES, type DriftState } from '@brokkr/contracts';
import { rfc3339, uuid } from '../../http/schemas.ts';

/** `?state=open,corrected`: a comma-separated list of drift states. */
const stateList = z
  .string()
  .transform((s) => s.split(',').filter(Boolean))
  .pipe(z.array(z.enum(DRIFT_STATES)).min(1))
  .optional()
  .meta({ description: 'Comma-separated states: open, corrected, resolved, accepted (default: all)' });

/** The filters every drift read takes. */
const filters = {
  agent_id: uuid().optional(),
  state: stateList,
  since: rfc3339().optional().meta({ description: 'Seen at or after (last_seen)' }),
  until: rfc3339().optional().meta({ description: 'First seen before' }),
  kind: z.string().max(63).optional(),
  path: z.string().max(1024).optional().meta({ description: 'Only records with drift at this JSON pointer' }),
  manager: z.string().max(256).optional().meta({ description: 'Only records with a field owned by this field manager' }),
};

const page = {
  limit: z.coerce.number().int().min(1).max(1000).default(100).meta({ description: 'Records per page (at most 1000)' }),
  cursor: z.string().max(512).optional().meta({ description: "The previous page's next_cursor" }),
};

const grouping = {
  by: z.enum(DRIFT_GROUPINGS).default('field'),
  limit: z.coerce.number().int().min(1).max(1000).default(100).meta({ description: 'Groups, largest first' }),
};

export const fleetDriftQuery = z.object({ stack_id: uuid().optional(), ...filters, ...page });
export const stackDriftQuery = z.object({ ...filters, ...page });
export const fleetGroupQuery = z.object({ stack_id: uuid().optional(), ...filters, ...grouping });
export const stackGroupQuery = z.object({ ...filters, ...grouping });

/** The filters as a query parsed them. */
export interface DriftFilterQuery {
  agent_id?: string | undefined;
  state?: DriftState[] | undefined;
  since?: string | undefined;
  until?: string | undefined;
  kind?: string | undefined;
  path?: string | undefined;
  manager?: string | undefined;
}

export const driftReportAnswerSchema = z
  .object({
    accepted: z.number().int().meta({ description: 'Reports taken (repeats included: they change nothing)' }),
    detected: z.number().int(),
    corrected: z.number().int(),
    resolved: z.number().int(),
    closed: z
      .array(uuid())
      .meta({ description: 'Episodes reported open whose record is closed already (accepted by an operator): the agent ends them' }),
  })
  .meta({ id: 'DriftReportAnswer' });

export const driftAcceptAnswerSchema = z
  .object({
    record_id: uuid(),
    stack_id: uuid(),
    rules: z.number().int().optional().meta({ description: "Ignore rules the stack's policy now holds (scopes fields and object)" }),
    override: z
      .string()
      .optional()
      .meta({ description: 'The override layer that keeps the live values (scope override): GET /stacks/{id}/overrides/{name}' }),
  })
  .meta({ id: 'DriftAcceptAnswer' });
