import createClient, { type Client } from 'openapi-fetch';
import type { components, operations, paths } from './schema';
import { answerError } from './answer-error';

export type { components, operations, paths };

/** The request and response shapes of the API, by name: `Schemas['ContactView']`, `Schemas['CreateContactDto']`. */
export type Schemas = components['schemas'];

/** `{error: {code, message, details?}}`, the body of every 4xx and 5xx answer. */
export type ApiError = Schemas['ErrorView'];

export type CrmClient = Client<paths>;

export interface CrmClientOptions {
  /** Where the gateway listens, e.g. `http://127.0.0.1:3000`. */
  baseUrl: string;
  /** Sent as `X-Api-Key` on every request. */
  apiKey: string;
  /** A fetch of your own (tests, proxies, instrumentation); the global fetch otherwise. */
  fetch?: typeof globalThis.fetch;
}

/**
 * A typed client of the CRM API: paths, parameters, bodies and answers are checked against the OpenAPI
 * document at compile time. Each call resolves to `{data, error, response}`: `data` on 2xx, `error`
 * (an ApiError) otherwise.
 */
export function createCrmClient(options: CrmClientOptions): CrmClient {
  return createClient<paths>({ baseUrl: options.baseUrl.replace(/\/+$/, ''), headers: { 'X-Api-Key': options.apiKey }, fetch: options.fetch });
}

/** A value a filter compares with (docs/query.md). */
export type QueryValue = string | number | boolean | null;

/** The operators of one condition; all listed must hold. Nulls follow MongoDB: `$ne` and `$nin` match them, comparisons never do. */
export interface QueryOperators {
  $eq?: QueryValue;
  $ne?: QueryValue;
  $gt?: string | number;
  $gte?: string | number;
  $lt?: string | number;
  $lte?: string | number;
  $in?: QueryValue[];
  $nin?: QueryValue[];
  /** Case-insensitive; `%`, `_` and `\` are literal characters. */
  $contains?: string;
  $starts_with?: string;
  $ends_with?: string;
  /** true: the field is not null. */
  $exists?: boolean;
}

/**
 * A filter over an object's paths (`email`, `custom_fields.region`, `contact.email`, `values.lead.email`):
 * conditions on paths (ANDed), or `$and`/`$or`/`$not` of filters. Name `Path` to have the compiler check
 * path names, e.g. `Filter<'value' | 'stage.type' | 'contact.email'>`.
 */
export type Filter<Path extends string = string> =
  { [P in Path]?: QueryValue | QueryOperators } | { $and: Filter<Path>[] } | { $or: Filter<Path>[] } | { $not: Filter<Path> };

/** The body of `POST /<object>/query`. */
export interface Query<Path extends string = string> {
  filter?: Filter<Path>;
  sort?: Array<{ field: Path; direction?: 'asc' | 'desc' }>;
  fields?: Path[];
  /** 1 to 200; 50 by default. */
  limit?: number;
}

/**
 * The objects with a `POST /<object>/query` of their own, read from the API's paths: those with records at
 * `/<object>/{id}` (the event log's `POST /events/query` is not a record query); a custom object's records are
 * queried by slug.
 */
export type QueryObject = {
  [P in keyof paths]: P extends `/${infer O}/query` ? (O extends `${string}/${string}` ? never : `/${O}/{id}` extends keyof paths ? O : never) : never;
}[keyof paths];

/**
 * Every item a query matches, page after page (following `next_cursor` with the same query), as an async
 * iterator; an answer other than 200 throws with the API's error. `{custom: 'projects'}` queries a custom
 * object's records.
 */
export async function* queryAll<Path extends string = string>(
  client: CrmClient,
  object: QueryObject | { custom: string },
  query: Query<Path> = {},
): AsyncGenerator<{ id: string } & Record<string, unknown>> {
  let cursor: string | undefined;
  do {
    const body = { ...query, ...(cursor ? { cursor } : {}) } as Schemas['RecordQueryDto'];
    const { data, error, response } =
      typeof object === 'string'
        ? await client.POST(`/${object}/query`, { body })
        : await client.POST('/objects/{slug}/records/query', { params: { path: { slug: object.custom } }, body });
    if (!data) throw answerError('POST query', response, error);
    const page = data as { data: Array<{ id: string } & Record<string, unknown>>; has_more: boolean; next_cursor?: string };
    yield* page.data;
    cursor = page.has_more ? page.next_cursor : undefined;
  } while (cursor);
}
export * from './aggregate';
export * from './exports';
