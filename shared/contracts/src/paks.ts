import { z } from 'zod';
import { agentSchema } from './agent-api.ts';
import { timestamp } from './wire.ts';

/** Answers that carry a freshly minted PAK: shown only then, the hub keeps only its hash. Clients (the CLI) read them. */

/** POST /agents. */
export const createAgentResponseSchema = z.object({ agent: agentSchema, initial_pak: z.string() }).meta({ id: 'CreateAgentResponse' });
export type CreateAgentResponse = z.output<typeof createAgentResponseSchema>;

/** POST /agents/{id}/rotate-pak. */
export const rotateAgentPakResponseSchema = z.object({ agent: agentSchema, pak: z.string() }).meta({ id: 'RotateAgentPakResponse' });
export type RotateAgentPakResponse = z.output<typeof rotateAgentPakResponseSchema>;

/** POST /admin/rotate-pak. */
export const rotateAdminPakResponseSchema = z
  .object({ pak: z.string().describe('The new admin PAK; only its hash is stored'), rotated_at: timestamp() })
  .meta({ id: 'RotateAdminPakResponse' });
export type RotateAdminPakResponse = z.output<typeof rotateAdminPakResponseSchema>;
