import { errorKind, raising } from '../errors/api-error.ts';
import type { Identity } from './identity.ts';

/** Admin, or the generator itself. */
export const isAdminOrGenerator = (identity: Identity, generatorId: string) => identity.admin || identity.generator === generatorId;

/** Admin, or the agent itself. */
export const isAdminOrAgent = (identity: Identity, agentId: string) => identity.admin || identity.agent === agentId;

export const generatorNotOwned = errorKind(403, 'generator_not_owned', 'Access denied to this generator');

export const requireAdminOrGenerator = raising((identity: Identity, generatorId: string): void => {
  if (!isAdminOrGenerator(identity, generatorId)) throw generatorNotOwned();
}, generatorNotOwned);
