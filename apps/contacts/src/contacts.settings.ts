import { Env } from '@crm/common';
import { loadQuerySettings, QuerySettings } from '@crm/runtime';

export const CONTACTS_SETTINGS = Symbol('CONTACTS_SETTINGS');

export type ContactsSettings = QuerySettings;

export function loadContactsSettings(env: Env): ContactsSettings {
  return loadQuerySettings(env);
}
