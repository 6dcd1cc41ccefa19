import type { Request } from 'express';
import { z } from 'zod';
import type { ListWindow } from '../domain/list-window.ts';
import type { Reply } from './route.ts';

/**
 * Paging for lists whose rows carry YAML or other large text (a stack's deployment objects,
 * agent events, templates). Brokkr returns such lists whole; here a request without `limit` or
 * `offset` still gets Brokkr's bare array, but at most `BROKKR__BROKER__LIST_MAX_ITEMS` entries:
 * the first ones in the list's order (newest first where it has one), with
 * `X-Brokkr-Truncated: true` and a `Link: <…>; rel="next"` to the rest. With `limit`/`offset` the
 * answer is the same bare array, one page of at most the cap, with `Link` while more follow
 * (docs/compatibility.md, "Lists").
 */
export const listPageQuery = z.object({
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .optional()
    .meta({ description: 'Entries per page (capped by BROKKR__BROKER__LIST_MAX_ITEMS, the default)' }),
  offset: z.coerce.number().int().min(0).optional().meta({ description: 'Entries to skip (default 0)' }),
});
export type ListPageQuery = z.output<typeof listPageQuery>;

export interface ListPage extends ListWindow {
  /** The client sent `limit` or `offset`. */
  paged: boolean;
}

export function listPage(query: ListPageQuery, maxItems: number): ListPage {
  return {
    limit: Math.min(query.limit ?? maxItems, maxItems),
    offset: query.offset ?? 0,
    paged: query.limit !== undefined || query.offset !== undefined,
  };
}

/** The window to read for `page`: one extra row. */
export const readWindow = (page: ListPage): ListWindow => ({ limit: page.limit + 1, offset: page.offset });

/** 200 with the page's rows (read with `readWindow`), `Link` to the next page when more follow. */
export function pageReply(req: Request, page: ListPage, rows: readonly unknown[]): Reply {
  if (rows.length <= page.limit) return { status: 200, body: rows };
  const path = req.originalUrl.split('?')[0] ?? '';
  const headers: Record<string, string> = {
    Link: `<${path}?limit=${page.limit}&offset=${page.offset + page.limit}>; rel="next"`,
  };
  if (!page.paged) headers['X-Brokkr-Truncated'] = 'true';
  return { status: 200, body: rows.slice(0, page.limit), headers };
}
