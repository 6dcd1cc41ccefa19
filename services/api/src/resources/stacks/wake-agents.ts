import type { TxScope } from '../../events/transact.ts';
import { agentsForStack, type AlsoMatching } from '../../domain/agents-for-stacks.ts';

/**
 * Queues a wake-up (sent after commit) for every agent whose target state depends on the stack.
 * Runs inside the write's transaction so it sees the change; `also` names what the write just
 * removed (a label, an annotation, the old generator), whose agents lose the stack and must
 * hear about it too.
 */
export async function wakeStackAgents(tx: TxScope, stackId: string, also: AlsoMatching = {}): Promise<void> {
  tx.notifyAgents(await agentsForStack(tx.client, stackId, also));
}
