import { Env } from '@crm/common';
import { ChangeSettings, loadChangeSettings, loadQuerySettings, QuerySettings } from '@crm/runtime';

export const CONTACTS_SETTINGS = Symbol('CONTACTS_SETTINGS');

export type ContactsSettings = QuerySettings & ChangeSettings;

export function loadContactsSettings(env: Env): ContactsSettings {
  return { ...loadQuerySettings(env), ...loadChangeSettings(env) };
}
