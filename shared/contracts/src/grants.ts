import { z } from 'zod';
import { effectiveDriftPolicySchema } from './drift.ts';
import { maintenanceScheduleSchema } from './maintenance-windows.ts';
import { uuid } from './wire.ts';

/** A namespace name (RFC 1123 label, as Kubernetes checks it). */
export const namespaceName = () => z.string().regex(/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/, 'a namespace name (RFC 1123 label)');

/** A namespace name in which `*` stands for any run of the characters a name may hold. */
const namespacePattern = () =>
  z
    .string()
    .max(63)
    .regex(/^[a-z0-9*]([-a-z0-9*]{0,61}[a-z0-9*])?$/, 'a namespace name, `*` matching any part of it');

/** `<group>/<Kind>`, or a core kind alone (`Pod`). */
const kindReference = () =>
  z
    .string()
    .max(253)
    .regex(/^([a-z0-9]([-a-z0-9.]*[a-z0-9])?\/)?[A-Za-z][A-Za-z0-9]*$/, '`<group>/<Kind>`, or `<Kind>` for the core group');

/**
 * What a generator may place on one agent's cluster: the grant of its registration with that
 * agent, made by the cluster's side (the agent's request, or an admin) and enforced by the agent
 * before every apply (docs/security.md, "Tenants confined in shared clusters").
 */
export const grantSchema = z
  .object({
    namespaces: z
      .array(namespacePattern())
      .max(100)
      .meta({ description: 'Namespaces the stacks may place namespaced objects in (names, `*` as a wildcard), besides default_namespace' }),
    default_namespace: namespaceName().meta({
      description: 'Where a namespaced object without a namespace goes; the agent creates and labels it',
    }),
    cluster_scoped: z.boolean().meta({ description: 'Cluster-scoped kinds allowed (Namespaces within the grant always are)' }),
    whole_cluster: z.boolean().meta({
      description:
        "Everything the agent's RBAC reaches (Brokkr's behaviour), but only while this generator is the only tenant registered with the agent",
    }),
    adoption: z.boolean().meta({ description: 'A manifest may adopt a live object no stack manages (brokkr.io/adopt-existing)' }),
    delete_adopted: z.boolean().meta({ description: 'Deleting or pruning the stack deletes objects it adopted (else it releases them)' }),
    refused_kinds: z
      .array(kindReference())
      .max(100)
      .meta({ description: 'Kinds refused outright, whatever the namespace (`<group>/<Kind>`)' }),
  })
  .meta({ id: 'Grant' });
export type Grant = z.output<typeof grantSchema>;

/** A grant as it is asked for or set: every field optional, the rest from the defaults. */
export const grantInputSchema = grantSchema.partial().strict().meta({ id: 'GrantInput' });
export type GrantInput = z.output<typeof grantInputSchema>;

/** One generator's grant on the agent, resolved, and whether whole_cluster is in effect right now. */
export const agentGrantSchema = z
  .object({
    generator_id: uuid(),
    generator_name: z.string(),
    is_system: z.boolean(),
    grant: grantSchema,
    whole_cluster_in_effect: z.boolean(),
  })
  .meta({ id: 'AgentGrant' });
export type AgentGrant = z.output<typeof agentGrantSchema>;

/** GET /agents/{id}/grants: every grant of the agent, and the generator of each stack it is served. */
export const agentGrantsSchema = z
  .object({
    agent_id: uuid(),
    tenants: z.number().int().meta({ description: 'Generators other than the system generator registered with the agent' }),
    generators: agentGrantSchema.array(),
    stacks: z
      .object({
        stack_id: uuid(),
        generator_id: uuid(),
        drift: effectiveDriftPolicySchema
          .optional()
          .meta({ description: "The stack's drift policy for this agent; absent: the default (correct, owned fields, no ignore rules)" }),
      })
      .array(),
    maintenance: maintenanceScheduleSchema.optional().meta({
      description: 'The maintenance windows that select the agent (absent from a hub without them: the agent keeps the last it got)',
    }),
  })
  .meta({ id: 'AgentGrants' });
export type AgentGrants = z.output<typeof agentGrantsSchema>;
