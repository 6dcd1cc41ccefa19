import type { Knex } from 'knex';

// Expiring stacks (preview environments): a stack may carry expires_at; maintenance announces it
// (`stack.expiring`, once: expiry_announced_at) and then soft-deletes it like DELETE /stacks/{id}
// does (the stack trigger retires its objects and inserts the deletion marker). Changing
// expires_at clears expiry_announced_at so an extended stack is announced again.

const expiry = `
ALTER TABLE stacks ADD COLUMN expires_at timestamptz;
ALTER TABLE stacks ADD COLUMN expiry_announced_at timestamptz;
CREATE INDEX idx_stacks_expires_at ON stacks (expires_at) WHERE deleted_at IS NULL AND expires_at IS NOT NULL;
`;

export async function up(knex: Knex): Promise<void> {
  await knex.raw(expiry);
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
