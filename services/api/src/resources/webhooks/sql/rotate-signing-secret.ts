import type { Queryable } from '@brokkr/db';

/**
 * The current secret becomes the previous one, still signing until the grace period ends, so
 * receivers can switch to the new secret without dropping a delivery. One statement: two
 * concurrent rotations cannot both demote the same secret.
 */
export async function rotateSigningSecret(
  db: Queryable,
  id: string,
  next: Buffer,
  graceSeconds: number,
): Promise<{ name: string; enabled: boolean; previous_signing_secret_expires_at: Date | null } | undefined> {
  const { rows } = await db.query<{ name: string; enabled: boolean; previous_signing_secret_expires_at: Date | null }>(
    `UPDATE webhook_subscriptions
        SET previous_signing_secret_encrypted = signing_secret_encrypted,
            previous_signing_secret_expires_at = CASE WHEN signing_secret_encrypted IS NULL THEN NULL
                                                      ELSE now() + make_interval(secs => $3) END,
            signing_secret_encrypted = $2
      WHERE id = $1
  RETURNING name, enabled, previous_signing_secret_expires_at`,
    [id, next, graceSeconds],
  );
  return rows[0];
}
