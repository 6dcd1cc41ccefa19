import { z } from 'zod';
import { uuid } from '../../http/schemas.ts';
import type { DependencyRow } from './sql/dependency-row.ts';
import type { SelectorDependencyRow } from './sql/selectors.ts';

/** The wire shapes are @brokkr/contracts' (dependencies.ts): the CLI and the console read the same. */
export { newStackDependencySchema, stackAgentStatusSchema, stackDependencySchema } from '@brokkr/contracts';

export const dependencyParams = z.object({ id: uuid(), stack_id: uuid() });
export const stackAgentParams = z.object({ id: uuid(), agent_id: uuid() });

/** A dependency as clients read it: on one stack (`stack_id`) or by selector (`id`, `selector`). */
export function dependencyJson(row: DependencyRow | SelectorDependencyRow) {
  return { ...row, created_at: row.created_at.toISOString() };
}
