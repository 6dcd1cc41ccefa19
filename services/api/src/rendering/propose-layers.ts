import type { NewOverride } from '@brokkr/contracts';
import { invalidOverride, overrideExists, overrideNotFound } from '../errors/catalogue.ts';
import { unreadableReference } from '@brokkr/overrides';
import type { OverrideLayer } from '@brokkr/overrides';

/** The layer as the renderer reads it; the id is the stored one's, or none yet. */
function asLayer(input: NewOverride, id = ''): OverrideLayer {
  const reason = unreadableReference([input.values, input.patches]);
  if (reason) throw invalidOverride.with(`The layer "${input.name}" cannot be rendered for any agent: ${reason}`);
  return {
    id,
    name: input.name,
    priority: input.priority,
    selector: input.selector,
    layer_values: input.values ?? null,
    patches: input.patches ?? null,
  };
}

export function proposeAdded(current: readonly OverrideLayer[], input: NewOverride): OverrideLayer[] {
  if (current.some((l) => l.name === input.name))
    throw overrideExists.with(`The stack already has an override layer named "${input.name}"`);
  return [...current, asLayer(input)];
}

export function proposeReplaced(current: readonly OverrideLayer[], name: string, input: NewOverride): OverrideLayer[] {
  const old = current.find((l) => l.name === name);
  if (!old) throw overrideNotFound.with(`The stack has no override layer named "${name}"`);
  if (input.name !== name && current.some((l) => l.name === input.name))
    throw overrideExists.with(`The stack already has an override layer named "${input.name}"`);
  return current.map((l) => (l === old ? asLayer(input, old.id) : l));
}

export function proposeRemoved(current: readonly OverrideLayer[], name: string): OverrideLayer[] {
  if (!current.some((l) => l.name === name)) throw overrideNotFound.with(`The stack has no override layer named "${name}"`);
  return current.filter((l) => l.name !== name);
}
