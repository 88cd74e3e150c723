import { Env, intVar } from '@crm/common';

export const CONTACTS_SETTINGS = Symbol('CONTACTS_SETTINGS');

export interface ContactsSettings {
  /**
   * Longest a `POST /<object>/query` statement runs before it is answered `query_too_expensive`; the
   * service keeps it under RPC_TIMEOUT_MS, so the client hears why rather than a 503.
   */
  queryTimeoutMs: number;
}

export function loadContactsSettings(env: Env): ContactsSettings {
  return { queryTimeoutMs: intVar(env, 'QUERY_TIMEOUT_MS', 3000, { min: 10, max: 60000 }) };
}
