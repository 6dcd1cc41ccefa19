/**
 * The rows a list statement reads: `limit` rows from `offset` on. The HTTP side
 * (http/list-page.ts) asks for one row more than the page, to know whether more follow.
 */
export interface ListWindow {
  limit: number;
  offset: number;
}
