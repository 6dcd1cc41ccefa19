import type { Queryable } from '@brokkr/db';
import type { Identity } from '../../auth/identity.ts';
import { errorKind, raising } from '../../errors/api-error.ts';
import { generatorNotAssociated } from '../../errors/catalogue.ts';
import { agentHasHardTarget } from '../../domain/live-stack.ts';
import type { DeploymentObjectWithStack } from './sql/queries.ts';

const agentNotAssociated = errorKind(403, 'agent_not_associated', 'Agent is not associated with this deployment object');

/** Admin; the generator owning the stack; an agent with an explicit target on the stack. */
export const requireObjectReader = raising(
  async (db: Queryable, identity: Identity, found: DeploymentObjectWithStack): Promise<void> => {
    if (identity.admin) return;
    if (identity.generator !== null && identity.generator !== found.stackGeneratorId) throw generatorNotAssociated();
    if (identity.agent !== null && !(await agentHasHardTarget(db, identity.agent, found.object.stack_id))) throw agentNotAssociated();
  },
  generatorNotAssociated,
  agentNotAssociated,
);
