import type { Identity } from '../../auth/identity.ts';
import { raising } from '../../errors/api-error.ts';
import { foreignKeyViolation } from '../../http/db-errors.ts';
import { labelRoutes } from '../../http/label-routes.ts';
import { requireAdminOrSelf, requireSameAgent } from '../../domain/agent-access.ts';
import { labelOwners } from '../../domain/labels/owners.ts';
import { agentAnnotationSchema, agentLabelSchema, newAgentAnnotationSchema, newAgentLabelSchema } from './schemas.ts';

/** Brokkr's "A, Ag(self)" read rule; there is no existence check (an unknown agent has no labels). */
const readAgentMetadata = raising(
  (_db: unknown, identity: Identity, agentId: string) => requireAdminOrSelf(identity, agentId),
  requireAdminOrSelf,
);

/**
 * Agent labels and annotations: the admin changes them, the agent reads its own. Every change
 * wakes the agent: its label and annotation matches, hence its target state, may differ. An agent
 * id that was never an agent is a foreign-key violation (422), as in Brokkr.
 */
export const agentMetadataRoutes = labelRoutes({
  owner: labelOwners.agent,
  tags: ['agents'],
  writeAccess: 'admin',
  read: readAgentMetadata,
  label: {
    schema: newAgentLabelSchema,
    row: agentLabelSchema,
    read(body, agentId) {
      requireSameAgent(agentId, body.agent_id);
      return body.label;
    },
    errors: [requireSameAgent],
  },
  annotation: {
    schema: newAgentAnnotationSchema,
    row: agentAnnotationSchema,
    read(body, agentId) {
      requireSameAgent(agentId, body.agent_id);
      return body;
    },
    errors: [requireSameAgent],
  },
  insertErrors: [foreignKeyViolation],
  wake: (tx, agentId) => tx.notifyAgents([agentId]),
});
