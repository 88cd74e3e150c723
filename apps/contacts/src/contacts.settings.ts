import { ConfigError, Env } from '@crm/common';
import { ChangeSettings, loadChangeSettings, loadQuerySettings, loadSearchSettings, QuerySettings, SearchSettings } from '@crm/records';

export const CONTACTS_SETTINGS = Symbol('CONTACTS_SETTINGS');

/** Fewest characters a PRIVACY_HMAC_KEY may have: `openssl rand -base64 32` gives 44. */
const PRIVACY_HMAC_KEY_MIN_LENGTH = 32;

export interface PrivacySettings {
  /** The key of the hash erasure receipts and suppressions keep of an email; unset, one is made and kept in the database. */
  privacyHmacKey?: string;
}

export type ContactsSettings = QuerySettings & ChangeSettings & SearchSettings & PrivacySettings;

export function loadContactsSettings(env: Env): ContactsSettings {
  return { ...loadQuerySettings(env), ...loadChangeSettings(env), ...loadSearchSettings(env), ...loadPrivacySettings(env) };
}

function loadPrivacySettings(env: Env): PrivacySettings {
  const key = env.PRIVACY_HMAC_KEY?.trim();
  if (!key) return {};
  // A placeholder or a short word would make the email hashes guessable; refuse to start instead.
  if (key.length < PRIVACY_HMAC_KEY_MIN_LENGTH) {
    throw new ConfigError(`PRIVACY_HMAC_KEY must have at least ${PRIVACY_HMAC_KEY_MIN_LENGTH} characters, e.g. the output of openssl rand -base64 32`);
  }
  return { privacyHmacKey: key };
}
