import { PageQuery } from '../paging';
import { IsInt, IsObject, IsOptional, IsString, Max, MaxLength, Min } from 'class-validator';
import { MAX_PAGE_SIZE } from '../paging';

/** How many events one page of a filtered read tests at most (docs/events.md): a rare filter answers a short page, never a long wait. */
export const EVENT_FILTER_SCAN_LIMIT = 5_000;
/** Longest `filter` of GET /events, as URL-encoded JSON; longer ones go in the body of POST /events/query. */
export const EVENT_FILTER_URL_MAX = 4_000;

export class ListEventsQuery extends PageQuery {
  /** One type, a comma-separated list, or `resource.*` prefixes, e.g. `contact.*,deal.won`. */
  @IsOptional()
  @IsString({ message: 'type must be a string' })
  @MaxLength(1000)
  type?: string;

  /** A filter as JSON (URL-encoded), the language of POST /<object>/query over the event (docs/events.md). */
  @IsOptional()
  @IsString({ message: 'filter must be a JSON object, URL-encoded' })
  @MaxLength(EVENT_FILTER_URL_MAX, { message: `filter must be at most ${EVENT_FILTER_URL_MAX} characters; send longer ones to POST /events/query` })
  filter?: string;
}

/** `POST /events/query`: GET /events with the filter in the body, for filters too long for a URL. */
export class EventQueryDto {
  /** `{path: literal}`, `{path: {$op: value}}`, `$and`, `$or`, `$not` over type, actor, via, request_id and data. */
  @IsOptional()
  @IsObject({ message: 'filter must be an object' })
  filter?: Record<string, unknown>;

  @IsOptional()
  @IsString({ message: 'type must be a string' })
  @MaxLength(1000)
  type?: string;

  @IsOptional()
  @IsString({ message: 'cursor must be a string' })
  @MaxLength(512)
  cursor?: string;

  @IsOptional()
  @IsInt({ message: 'limit must be an integer' })
  @Min(1, { message: `limit must be between 1 and ${MAX_PAGE_SIZE}` })
  @Max(MAX_PAGE_SIZE, { message: `limit must be between 1 and ${MAX_PAGE_SIZE}` })
  limit?: number;
}
