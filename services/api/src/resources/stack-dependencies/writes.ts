import type { NewStackDependency } from '@brokkr/contracts';
import { tenantOf, type Identity } from '../../auth/identity.ts';
import { errorKind } from '../../errors/api-error.ts';
import { fetchOwnedStack } from '../../domain/stack-access.ts';
import { cycleThrough } from '../../domain/dependency-graph.ts';
import { dependencyCycle } from '../../errors/catalogue.ts';
import { requireValidLabel } from '../../domain/labels/validity.ts';
import type { TxScope } from '../../events/transact.ts';
import { addDependency } from './sql/add-dependency.ts';
import type { DependencyRow } from './sql/dependency-row.ts';
import { addSelectorDependency, stacksSelected, type SelectorDependencyRow } from './sql/selectors.ts';

/**
 * The two kinds of dependency a stack is given (docs/dependencies.md), each checked for a cycle
 * against the graph of direct edges and selector matches. The caller holds the graph's lock
 * (domain/dependency-graph.ts) and the dependent stack.
 */

export { dependencyCycle };
export const dependencyExists = errorKind(409, 'dependency_exists', 'The stack already depends on this stack');

/** `{stack_id}`: the stack depended on must be one the caller may read (fetchOwnedStack), held live until commit. */
export async function addStackEdge(tx: TxScope, identity: Identity, dependent: string, body: NewStackDependency): Promise<DependencyRow> {
  const needed = await fetchOwnedStack(tx.client, identity, body.stack_id!, 'share');
  const cycle = await cycleThrough(tx.client, dependent, [needed.id]);
  if (cycle) throw dependencyCycle({ cycle });
  const added = await addDependency(tx.client, {
    dependentId: dependent,
    dependsOn: needed.id,
    readyWhen: body.ready_when,
    scope: body.scope,
    createdBy: tenantOf(identity),
  });
  if (!added) throw dependencyExists();
  return added;
}

/**
 * `{selector}`: matches only stacks the caller may read — a generator's selector its own stacks,
 * the admin's any — fixed with the row; refused when a stack it matches now leads back to the
 * dependent. Labels are sorted and deduplicated, so the same selector twice is a 409.
 */
export async function addSelectorEdge(
  tx: TxScope,
  identity: Identity,
  dependent: string,
  body: NewStackDependency,
): Promise<SelectorDependencyRow> {
  const labels = [...new Set(body.selector!.labels)].sort();
  labels.forEach((label) => requireValidLabel(label));
  const selector = { dependentId: dependent, labels, generatorId: identity.admin ? null : identity.generator };
  const cycle = await cycleThrough(tx.client, dependent, await stacksSelected(tx.client, selector));
  if (cycle) throw dependencyCycle({ cycle });
  const added = await addSelectorDependency(tx.client, {
    ...selector,
    readyWhen: body.ready_when,
    scope: body.scope,
    createdBy: tenantOf(identity),
  });
  if (!added) throw dependencyExists();
  return added;
}
