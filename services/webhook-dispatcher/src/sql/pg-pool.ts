import type pg from 'pg';

/**
 * The pg pool itself (not the text-only `Queryable`): the hot statements are named, so each
 * pooled connection prepares them once instead of planning them on every delivery.
 */
export type PgPool = Pick<pg.Pool, 'query'>;
