import { DEFAULT_PAGE_SIZE } from '@crm/contracts';
import type { Page } from '@crm/contracts';
import { CursorCodec } from './cursors';

/*
 * The query and the page a client sees are contracts (@crm/contracts); they are re-exported here beside
 * the server's half of paging: page sizes and byte budgets (cursors are in cursors.ts).
 */
export { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE, PageQuery, QueryInt, SortablePageQuery } from '@crm/contracts';
export type { Page } from '@crm/contracts';

export function pageSize(query: { limit?: number }): number {
  return query.limit ?? DEFAULT_PAGE_SIZE;
}

/**
 * The most a page's items may take as JSON. A page travels from the owning service to the gateway as
 * one NATS message, whose payload limit is 1 MiB by default; half of it leaves room for the envelope,
 * escaping and a broker configured lower. Every item any list serves is far smaller than this budget
 * (metadata is capped at 16 KiB and custom values at 64 KiB), so a page always holds at least one.
 */
export const PAGE_BYTE_BUDGET = 512 * 1024;

/**
 * How many of `items`, taken in order, fit in `budget` bytes of JSON; always at least one when there
 * is any, so a list can never stall behind an item larger than the budget.
 */
export function countWithinBudget(items: readonly unknown[], budget = PAGE_BYTE_BUDGET): number {
  let used = 2; // the array's brackets
  for (let i = 0; i < items.length; i++) {
    used += Buffer.byteLength(JSON.stringify(items[i]) ?? 'null', 'utf8') + (i > 0 ? 1 : 0);
    if (used > budget) return Math.max(i, 1);
  }
  return items.length;
}

/**
 * Cuts a page's presented items to the count limit and to the byte budget. `more` says whether rows
 * exist beyond those fetched; the page has more if they do or if the budget cut it short.
 */
export function fitPage<T>(items: T[], size: number, more: boolean, budget = PAGE_BYTE_BUDGET): { items: T[]; hasMore: boolean } {
  const counted = items.slice(0, size);
  const fit = countWithinBudget(counted, budget);
  return { items: counted.slice(0, fit), hasMore: more || items.length > fit };
}

/**
 * Builds a page from rows fetched with `LIMIT size + 1`: the extra row only tells whether more exist.
 * The page also ends early when the next item would take it past the byte budget. `keyOf` gives the
 * sort key the next cursor resumes after, signed by `cursors`.
 */
export function toPage<R, T>(
  cursors: CursorCodec,
  list: string,
  rows: R[],
  size: number,
  keyOf: (row: R) => unknown,
  present: (row: R) => T,
  budget = PAGE_BYTE_BUDGET,
): Page<T> {
  const { items, hasMore } = fitPage(rows.slice(0, size).map(present), size, rows.length > size, budget);
  const page: Page<T> = { data: items, has_more: hasMore };
  if (hasMore) page.next_cursor = cursors.encode(list, keyOf(rows[items.length - 1]));
  return page;
}
