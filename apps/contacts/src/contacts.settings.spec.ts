import { ConfigError } from '@crm/common';
import { loadContactsSettings } from './contacts.settings';

describe('contacts settings: PRIVACY_HMAC_KEY', () => {
  it('is optional: unset or empty, the service makes its own key', () => {
    expect(loadContactsSettings({}).privacyHmacKey).toBeUndefined();
    expect(loadContactsSettings({ PRIVACY_HMAC_KEY: '' }).privacyHmacKey).toBeUndefined();
  });

  it('takes a key of 32 characters or more', () => {
    const key = 'k'.repeat(44);
    expect(loadContactsSettings({ PRIVACY_HMAC_KEY: key }).privacyHmacKey).toBe(key);
  });

  it('refuses a placeholder or a short key, without echoing it', () => {
    for (const value of ['REPLACE_ME', 'k'.repeat(31)]) {
      let error: unknown;
      try {
        loadContactsSettings({ PRIVACY_HMAC_KEY: value });
      } catch (err) {
        error = err;
      }
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as Error).message).toMatch(/PRIVACY_HMAC_KEY must have at least 32 characters/);
      expect((error as Error).message).not.toContain(value);
    }
  });
});
