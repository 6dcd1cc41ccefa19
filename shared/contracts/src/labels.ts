import { z } from 'zod';
import { uuid } from './wire.ts';

/** Label rows of agents and stacks as the hub serves them (a template's are in templates.ts); clients (the CLI) read them. */

export const agentLabelSchema = z.object({ id: uuid(), agent_id: uuid(), label: z.string() }).meta({ id: 'AgentLabel' });
export type AgentLabel = z.output<typeof agentLabelSchema>;

export const stackLabelSchema = z.object({ id: uuid(), stack_id: uuid(), label: z.string() }).meta({ id: 'StackLabel' });
export type StackLabel = z.output<typeof stackLabelSchema>;
