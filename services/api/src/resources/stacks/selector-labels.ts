import { agentsForStacks } from '../../domain/agents-for-stacks.ts';
import type { TxScope } from '../../events/transact.ts';
import { cycleThrough, lockDependencyGraph } from '../../domain/dependency-graph.ts';
import { selectorsDecidedByLabel, stacksSelecting } from '../../domain/dependency-selectors.ts';
import { dependencyCycle } from '../../errors/catalogue.ts';

/**
 * A stack label changes which stacks dependency selectors match (docs/dependencies.md): the label
 * routes of stacks (metadata-routes.ts) call these inside the label write's transaction.
 */

export { dependencyCycle };

/**
 * Wakes the agents of the stacks whose selectors the label `label` of `stackId` decides: the
 * stack joined or left their selection, so they may be held back or released.
 */
export async function wakeSelectingAgents(tx: TxScope, stackId: string, label: string): Promise<void> {
  const dependents = await selectorsDecidedByLabel(tx.client, stackId, label);
  if (dependents.length > 0) tx.notifyAgents(await agentsForStacks(tx.client, dependents));
}

/**
 * After `label` was added to `stackId`: refuses it (422 `dependency_cycle`) when a selector now
 * matching the stack belongs to a stack the labelled one leads back to, then wakes the selectors'
 * agents. Every stack label add takes the graph's lock (domain/dependency-graph.ts), as a selector write
 * does: checked without it, a label and a selector written at once could each miss the other.
 */
export async function checkSelectorsOnLabel(tx: TxScope, stackId: string, label: string): Promise<void> {
  await lockDependencyGraph(tx.client);
  for (const dependent of await stacksSelecting(tx.client, stackId)) {
    const cycle = await cycleThrough(tx.client, dependent, [stackId]);
    if (cycle) throw dependencyCycle({ cycle });
  }
  await wakeSelectingAgents(tx, stackId, label);
}
