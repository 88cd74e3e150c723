import { Env } from '@crm/common';
import { ChangeSettings, loadChangeSettings, loadQuerySettings, loadSearchSettings, QuerySettings, SearchSettings } from '@crm/records';

export const CONTACTS_SETTINGS = Symbol('CONTACTS_SETTINGS');

export type ContactsSettings = QuerySettings & ChangeSettings & SearchSettings;

export function loadContactsSettings(env: Env): ContactsSettings {
  return { ...loadQuerySettings(env), ...loadChangeSettings(env), ...loadSearchSettings(env) };
}
