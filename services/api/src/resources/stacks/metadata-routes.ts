import { labelRoutes } from '../../http/label-routes.ts';
import { labelOwners } from '../../domain/labels/owners.ts';
import { fetchOwnedStack, requireStackMetadataReader, stackIdMismatch } from '../../domain/stack-access.ts';
import { newStackAnnotationSchema, newStackLabelSchema, stackAnnotationSchema, stackLabelSchema } from './schemas.ts';
import { checkSelectorsOnLabel, dependencyCycle, wakeSelectingAgents } from './selector-labels.ts';
import { wakeStackAgents } from './wake-agents.ts';

/**
 * Stack labels and annotations: the admin or the owning generator changes them; they are read by
 * those and by agents with an explicit target on the stack. A change wakes every agent that gains
 * or loses the stack through it, and the agents of the stacks whose dependency selectors it
 * changes (docs/dependencies.md); a label that would close a cycle through a selector is refused.
 */
export const stackMetadataRoutes = labelRoutes({
  owner: labelOwners.stack,
  tags: ['stacks'],
  writeAccess: 'any',
  read: requireStackMetadataReader,
  modify: fetchOwnedStack,
  label: { schema: newStackLabelSchema, row: stackLabelSchema, read: (body) => body, errors: [dependencyCycle] },
  annotation: {
    schema: newStackAnnotationSchema,
    row: stackAnnotationSchema,
    read(body, stackId) {
      if (body.stack_id !== stackId) throw stackIdMismatch();
      return body;
    },
    errors: [stackIdMismatch],
  },
  async wake(tx, stackId, removed) {
    await wakeStackAgents(tx, stackId, removed);
    for (const label of removed.labels ?? []) await wakeSelectingAgents(tx, stackId, label);
  },
  labelAdded: checkSelectorsOnLabel,
});
