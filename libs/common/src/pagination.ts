import { Transform } from 'class-transformer';
import { IsInt, IsOptional, IsString, Max, MaxLength, Min } from 'class-validator';
import { DomainError, ErrorCode } from './errors';

/**
 * Query values arrive as strings: accept only plain integers (up to 16 digits, so every safe integer
 * fits), and turn anything else ('1.5', '1e2', '', 'ten') into NaN for the integer rule to reject,
 * rather than coercing it.
 */
export const QueryInt = (): PropertyDecorator =>
  Transform(({ value }) => (typeof value === 'string' ? (/^-?\d{1,16}$/.test(value) ? Number(value) : Number.NaN) : value));

export const DEFAULT_PAGE_SIZE = 50;
export const MAX_PAGE_SIZE = 200;

/** `cursor` and `limit`, accepted by every list endpoint. */
export class PageQuery {
  @IsOptional()
  @IsString()
  @MaxLength(512)
  cursor?: string;

  @IsOptional()
  @QueryInt()
  @IsInt({ message: 'limit must be an integer' })
  @Min(1, { message: `limit must be between 1 and ${MAX_PAGE_SIZE}` })
  @Max(MAX_PAGE_SIZE, { message: `limit must be between 1 and ${MAX_PAGE_SIZE}` })
  limit?: number;
}

export interface Page<T> {
  data: T[];
  has_more: boolean;
  next_cursor?: string;
}

/**
 * Cursors are opaque to clients: base64url JSON naming the list they belong to and the sort key of the
 * last item served. The list name stops a cursor from one list being replayed against another.
 */
export type CursorKey = string | number;

export function encodeCursor(list: string, key: CursorKey): string {
  return Buffer.from(JSON.stringify({ l: list, k: key }), 'utf8').toString('base64url');
}

export function decodeCursor<K extends CursorKey>(list: string, raw: string | undefined, kind: 'string' | 'number'): K | undefined {
  if (raw === undefined || raw === '') return undefined;
  const invalid = () => new DomainError(ErrorCode.InvalidRequest, 'cursor is not valid for this list', [
    { field: 'cursor', code: 'invalid_cursor', message: 'cursor is not valid for this list' },
  ]);
  if (!/^[A-Za-z0-9_-]+$/.test(raw)) throw invalid();
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8'));
  } catch {
    throw invalid();
  }
  const p = parsed as { l?: unknown; k?: unknown };
  if (typeof p !== 'object' || p === null || p.l !== list || typeof p.k !== kind) throw invalid();
  if (kind === 'number' && !Number.isSafeInteger(p.k)) throw invalid();
  return p.k as K;
}

export function pageSize(query: { limit?: number }): number {
  return query.limit ?? DEFAULT_PAGE_SIZE;
}

/**
 * Builds a page from rows fetched with `LIMIT size + 1`: the extra row only tells whether more exist.
 * `keyOf` gives the sort key the next cursor resumes after.
 */
export function toPage<R, T>(
  list: string,
  rows: R[],
  size: number,
  keyOf: (row: R) => CursorKey,
  present: (row: R) => T,
): Page<T> {
  const hasMore = rows.length > size;
  const served = hasMore ? rows.slice(0, size) : rows;
  const page: Page<T> = { data: served.map(present), has_more: hasMore };
  if (hasMore) page.next_cursor = encodeCursor(list, keyOf(served[served.length - 1]));
  return page;
}
