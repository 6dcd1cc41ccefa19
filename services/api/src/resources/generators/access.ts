import type { z } from 'zod';
import type { Identity } from '../../auth/identity.ts';
import { errorKind, raising } from '../../errors/api-error.ts';
import type { registrationBodySchema } from './schemas.ts';

type RegistrationBody = z.output<typeof registrationBodySchema>;

const registrationForbidden = errorKind(403, 'forbidden', 'Only an admin or the agent itself can change registrations');
const missingAgentId = errorKind(400, 'missing_agent_id', 'agent_id is required when an admin changes a registration');

/** Who a registration change is for: an agent registers itself (body ignored); an admin names the agent; a generator may not. */
export const agentToRegister = raising(
  (identity: Identity, body: RegistrationBody): string => {
    if (identity.agent) return identity.agent;
    if (!identity.admin) throw registrationForbidden();
    if (!body?.agent_id) throw missingAgentId();
    return body.agent_id;
  },
  registrationForbidden,
  missingAgentId,
);
