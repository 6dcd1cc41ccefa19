import type { Queryable } from '@brokkr/db';
import { STACK_COLUMNS, type StackRow } from '../../../domain/stack-row.ts';

/**
 * Sets (or, with null, clears) a live stack's expiry. A changed expiry is announced again
 * (`stack.expiring`), so expiry_announced_at is cleared with it. Undefined when the stack is not live.
 */
export async function setStackExpiry(db: Queryable, id: string, expiresAt: Date | null): Promise<StackRow | undefined> {
  const { rows } = await db.query<StackRow>(
    `UPDATE stacks SET expires_at = $2, expiry_announced_at = NULL
      WHERE id = $1 AND deleted_at IS NULL
      RETURNING ${STACK_COLUMNS}`,
    [id, expiresAt],
  );
  return rows[0];
}
