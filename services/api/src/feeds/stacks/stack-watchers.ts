import type { Queryable } from '@brokkr/db';
import type { Logger } from '@brokkr/logger';
import { isAdminOrGenerator } from '../../auth/guards.ts';
import { liveStackOwners } from '../../domain/live-stack.ts';
import type { StackFeed } from './stack-feed.ts';

/**
 * After a stack's owner changed or it was deleted (`stackId`; undefined = any stack held here),
 * closes the `/stacks/{id}/live` sockets whose identity may no longer watch it: everyone's when
 * the stack is gone, else all but the admin's and the new owner's (the rule the route applied at
 * the handshake). One query per invalidation, for the stacks this replica has subscribers for.
 */
export async function recheckStackWatchers(db: Queryable, feed: StackFeed, logger: Logger, stackId: string | undefined): Promise<void> {
  const held = feed.heldStacks();
  // Held ids are as the client spelled them (a UUID in upper case is valid); the database's are lower case.
  const ids = stackId === undefined ? held : held.filter((id) => id.toLowerCase() === stackId.toLowerCase());
  if (ids.length === 0) return;
  const owners = await liveStackOwners(db, ids);
  for (const id of ids) {
    const owner = owners.get(id.toLowerCase());
    const closed = feed.closeUnless(id, (identity) => owner !== undefined && isAdminOrGenerator(identity, owner));
    if (closed > 0)
      logger.info({ stackId: id, sockets: closed, deleted: owner === undefined }, 'closed live sockets that may no longer watch the stack');
  }
}
