import { z } from 'zod';
import { timestamp, uuid } from './wire.ts';

// A stack's override layers (per-cluster values and patches) and the explanation of an agent's
// render: the api serves them, the CLI and the console read them (docs/renders.md).

const NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const MAX_PATCHES = 100;

const jsonObject = () => z.record(z.string(), z.unknown());

const selectorSchema = z
  .strictObject({
    agent_ids: z.array(uuid()).max(10_000).optional().meta({ description: 'Only these agents' }),
    labels: z
      .array(z.string().min(1).max(256))
      .max(64)
      .optional()
      .meta({ description: 'Agents with every one of these labels (plain tags)' }),
    annotations: z
      .record(z.string().min(1).max(256), z.string().max(4096))
      .optional()
      .meta({ description: 'Agents with every one of these annotations (key/value pairs)' }),
  })
  .meta({
    id: 'OverrideSelector',
    description: 'Which agents the layer applies to: every criterion given must hold; {} selects every agent',
  });

const jsonPatchOperation = z.strictObject({
  op: z.enum(['add', 'remove', 'replace', 'move', 'copy', 'test']),
  path: z.string().regex(/^(\/.*)?$/, 'must be a JSON pointer'),
  value: z.unknown().optional(),
  from: z
    .string()
    .regex(/^(\/.*)?$/, 'must be a JSON pointer')
    .optional(),
});

const patchSchema = z
  .strictObject({
    target: z.strictObject({
      kind: z.string().min(1).max(256),
      name: z.string().min(1).max(253),
      namespace: z.string().min(1).max(63).optional(),
      apiVersion: z.string().min(1).max(256).optional(),
    }),
    merge_patch: jsonObject().optional().meta({ description: 'RFC 7386 JSON merge patch of the target document' }),
    json_patch: z.array(jsonPatchOperation).min(1).max(1000).optional().meta({ description: 'RFC 6902 JSON patch of the target document' }),
  })
  .refine((p) => p.merge_patch !== undefined || p.json_patch !== undefined, 'a patch needs merge_patch or json_patch')
  .meta({ id: 'OverridePatch' });

const layerFields = {
  priority: z
    .number()
    .int()
    .min(-1_000_000)
    .max(1_000_000)
    .default(0)
    .meta({ description: 'Layers apply lowest first; the last one wins' }),
  selector: selectorSchema.default({}),
  values: jsonObject().nullish().meta({ description: "Merged over a chart's values (maps key by key; null removes a key)" }),
  patches: z.array(patchSchema).max(MAX_PATCHES).nullish().meta({ description: 'Applied to the rendered objects, in order' }),
};

export const overrideNameSchema = z.string().regex(NAME, 'lower-case letters, digits and dashes').max(63);

export const newOverrideSchema = z.strictObject({ name: overrideNameSchema, ...layerFields }).meta({ id: 'NewOverride' });
export const overrideUpdateSchema = z.strictObject({ name: overrideNameSchema.optional(), ...layerFields }).meta({ id: 'OverrideUpdate' });

export const overrideSchema = z
  .object({
    id: uuid(),
    stack_id: uuid(),
    name: z.string(),
    priority: z.number().int(),
    selector: selectorSchema,
    values: jsonObject().nullable(),
    patches: z.array(patchSchema).nullable(),
    created_at: timestamp(),
    updated_at: timestamp(),
  })
  .meta({ id: 'Override' });

/**
 * A layer as a generator signs it and the hub relays it to an agent requiring signatures (the
 * render-inputs answer): the fields written, without the hub's id.
 */
export const signedLayerSchema = z
  .strictObject({
    name: z.string(),
    priority: z.number().int(),
    selector: selectorSchema,
    values: jsonObject().nullable(),
    patches: z.array(patchSchema).nullable(),
  })
  .meta({ id: 'SignedOverrideLayer' });

export type NewOverride = z.output<typeof newOverrideSchema>;
export type Override = z.output<typeof overrideSchema>;

/** GET /stacks/{id}/agents/{agent_id}/render: an agent's render, its inputs, and which layer set each field. */
export const explanationSchema = z
  .object({
    stack_id: uuid(),
    agent_id: uuid(),
    deployment_object_id: uuid(),
    per_agent: z.boolean().meta({ description: 'false: every agent is served the object as stored' }),
    yaml_content: z.string().nullable(),
    yaml_checksum: z.string().nullable(),
    error: z.string().nullable(),
    rendered_at: z.string().nullable(),
    inputs: z.object({
      source: z.record(z.string(), z.unknown()).nullable(),
      values: z.record(z.string(), z.unknown()).nullable(),
      capabilities: z.object({ kubeVersion: z.string(), apiVersions: z.array(z.string()) }).nullable(),
      layers: z.array(z.object({ name: z.string(), priority: z.number() })),
      error: z.string().nullable().meta({ description: 'The inputs cannot be made for this agent now (a reference it cannot resolve)' }),
    }),
    fields: z.array(
      z.object({
        in: z.enum(['values', 'object']),
        path: z.string(),
        layer: z.string(),
        target: z.string().optional(),
        by: z.string().optional(),
      }),
    ),
  })
  .meta({ id: 'RenderExplanation' });
export type Explanation = z.output<typeof explanationSchema>;
