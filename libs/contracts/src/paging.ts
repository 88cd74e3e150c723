import { Transform } from 'class-transformer';
import { IsInt, IsOptional, IsString, Matches, Max, MaxLength, Min } from 'class-validator';

/**
 * Query values arrive as strings: accept only plain integers (up to 16 digits, so every safe integer
 * fits), and turn anything else ('1.5', '1e2', '', 'ten') into NaN for the integer rule to reject,
 * rather than coercing it.
 */
export const QueryInt = (): PropertyDecorator =>
  Transform(({ value }) => (typeof value === 'string' ? (/^-?\d{1,16}$/.test(value) ? Number(value) : Number.NaN) : value));

export const DEFAULT_PAGE_SIZE = 50;
export const MAX_PAGE_SIZE = 200;

/** Decorators written one above the other, as one: applied bottom first, as TypeScript applies them. */
const stacked =
  (...decorators: PropertyDecorator[]): PropertyDecorator =>
  (target, key) => {
    for (const decorate of [...decorators].reverse()) decorate(target, key);
  };

/** A list's `cursor`: the opaque position its previous page answered with. */
export const CursorParam = () => stacked(IsOptional(), IsString(), MaxLength(512));

/** A list's `limit`: a whole number of items from 1 to `max`. */
export const LimitParam = (max: number) => {
  const message = `limit must be between 1 and ${max}`;
  return stacked(IsOptional(), QueryInt(), IsInt({ message: 'limit must be an integer' }), Min(1, { message }), Max(max, { message }));
};

/** `cursor` and `limit`, accepted by every list endpoint. */
export class PageQuery {
  @CursorParam()
  cursor?: string;

  @LimitParam(MAX_PAGE_SIZE)
  limit?: number;
}

/**
 * A list that can also be read in another order: `sort=-value,created_at` names up to five fields of its
 * items (`-` for descending); ties are broken by id, nulls come last ascending and first descending.
 * Without it the list keeps its own order.
 */
export class SortablePageQuery extends PageQuery {
  @IsOptional()
  @IsString({ message: 'sort must be a string' })
  @MaxLength(256, { message: 'sort must be at most 256 characters' })
  @Matches(/^-?[a-z][a-z0-9_]*(,-?[a-z][a-z0-9_]*)*$/, {
    message: 'sort is a comma-separated list of field names, each prefixed with - for descending, e.g. sort=-value,created_at',
  })
  sort?: string;
}

/** A page of a list; `next_cursor`, present when `has_more`, is opaque to clients. */
export interface Page<T> {
  data: T[];
  has_more: boolean;
  next_cursor?: string;
}
