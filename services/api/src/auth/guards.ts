import { forbidden } from '../http/api-error.ts';
import type { Identity } from './identity.ts';

/** Admin, or the generator itself. */
export const isAdminOrGenerator = (identity: Identity, generatorId: string) => identity.admin || identity.generator === generatorId;

/** Admin, or the agent itself. */
export const isAdminOrAgent = (identity: Identity, agentId: string) => identity.admin || identity.agent === agentId;

export function requireAdminOrGenerator(identity: Identity, generatorId: string, code = 'generator_not_owned'): void {
  if (!isAdminOrGenerator(identity, generatorId)) throw forbidden(code, 'Access denied to this generator');
}
