import createClient, { type Client } from 'openapi-fetch';
import type { components, operations, paths } from './schema';

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
