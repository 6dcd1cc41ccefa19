import type { Queryable } from '@brokkr/db';
import type { Identity } from '../../auth/identity.ts';
import { errorKind, raising } from '../../errors/api-error.ts';
import { generatorRequired, stackNotFound, stackNotOwned } from '../../errors/catalogue.ts';
import { findWindow, ownedLiveStacks } from './sql/queries.ts';
import type { WindowFields, WindowRow } from './sql/window-row.ts';

export const windowNotFound = errorKind(404, 'maintenance_window_not_found', 'Maintenance window not found');
export const windowScopeNotOwned = errorKind(
  403,
  'window_scope_not_owned',
  "A generator's maintenance window may name only that generator and its own stacks",
);

/**
 * Who may manage maintenance windows: the admin (every window) and generators (their own
 * windows, which reach only their own stacks); agents never. A generator asking for another's
 * window gets 404, as if it did not exist.
 */
export const requireWindowManager = raising((identity: Identity): string | undefined => {
  if (identity.admin) return undefined;
  if (!identity.generator) throw generatorRequired.with('Only an admin or a generator may manage maintenance windows');
  return identity.generator;
}, generatorRequired);

export const fetchManagedWindow = raising(
  async (db: Queryable, identity: Identity, id: string, lock = false): Promise<WindowRow> => {
    const owner = requireWindowManager(identity);
    const row = await findWindow(db, id, owner, lock);
    if (!row) throw windowNotFound();
    return row;
  },
  requireWindowManager,
  windowNotFound,
);

/**
 * A generator's window is confined to its own stacks: generator_ids may name only itself (and is
 * set to itself when the window names no stack), every stack it names must be its own. The admin
 * may name any live stack. Returns the fields as they are stored.
 */
export const confineScope = raising(
  async (db: Queryable, owner: string | undefined, fields: WindowFields): Promise<WindowFields> => {
    const stackIds = [...new Set(fields.stack_ids.map((s) => s.toLowerCase()))];
    const generatorIds = [...new Set(fields.generator_ids.map((g) => g.toLowerCase()))];
    if (owner && generatorIds.some((g) => g !== owner.toLowerCase())) throw windowScopeNotOwned({ generator_ids: generatorIds });
    const stacks = await ownedLiveStacks(db, stackIds, owner);
    const missing = stackIds.filter((id) => !stacks.some((s) => s.id === id));
    if (missing.length) throw stackNotFound({ stack_ids: missing });
    if (stacks.some((s) => !s.owned)) throw stackNotOwned({ stack_ids: stacks.filter((s) => !s.owned).map((s) => s.id) });
    const confined = owner && !stackIds.length ? [owner.toLowerCase()] : generatorIds;
    return { ...fields, stack_ids: stackIds, generator_ids: confined };
  },
  windowScopeNotOwned,
  stackNotFound,
  stackNotOwned,
);
