import { ConfigError } from '@crm/common';
import { randomBytes } from 'crypto';
import { loadSecretKeyring, SecretDecryptionError } from './secret-keyring';

const key = () => randomBytes(32).toString('base64');
const SECRET = `whsec_${randomBytes(32).toString('base64')}`;

function configError(value: string): string {
  try {
    loadSecretKeyring({ WEBHOOKS_SECRET_KEYS: value });
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as Error).message;
  }
  throw new Error(`accepted ${value}`);
}

describe('secret keyring', () => {
  it('seals with the current key, so the stored value holds neither the secret nor its key bytes', () => {
    const keyring = loadSecretKeyring({ WEBHOOKS_SECRET_KEYS: `k1:${key()}` });
    const sealed = keyring.seal('whk_1', SECRET);
    expect(sealed).toMatch(/^gcm1:k1:[A-Za-z0-9+/=]+:[A-Za-z0-9+/=]+:[A-Za-z0-9+/=]+$/);
    expect(sealed).not.toContain(SECRET.slice('whsec_'.length, 20));
    expect(keyring.open('whk_1', sealed)).toBe(SECRET);
    // A fresh IV every time: sealing twice never gives the same value.
    expect(keyring.seal('whk_1', SECRET)).not.toBe(sealed);
    expect(keyring.keyIdOf(sealed)).toBe('k1');
    expect(keyring.isCurrent(sealed)).toBe(true);
  });

  it('opens values sealed with any listed key and seals with the first', () => {
    const [k1, k2] = [key(), key()];
    const sealedBefore = loadSecretKeyring({ WEBHOOKS_SECRET_KEYS: `k1:${k1}` }).seal('whk_1', SECRET);
    const rotated = loadSecretKeyring({ WEBHOOKS_SECRET_KEYS: `k2:${k2}, k1:${k1}` });
    expect(rotated.open('whk_1', sealedBefore)).toBe(SECRET);
    expect(rotated.isCurrent(sealedBefore)).toBe(false);
    const sealedAfter = rotated.seal('whk_1', SECRET);
    expect(rotated.keyIdOf(sealedAfter)).toBe('k2');
    expect(loadSecretKeyring({ WEBHOOKS_SECRET_KEYS: `k2:${k2}` }).open('whk_1', sealedAfter)).toBe(SECRET);
  });

  it('reads values stored in plain text before encryption at rest', () => {
    const keyring = loadSecretKeyring({ WEBHOOKS_SECRET_KEYS: `k1:${key()}` });
    expect(keyring.open('whk_1', SECRET)).toBe(SECRET);
    expect(keyring.keyIdOf(SECRET)).toBeNull();
    expect(keyring.isCurrent(SECRET)).toBe(false);
  });

  it('refuses to open with a wrong or missing key, or for another subscription, naming the key id only', () => {
    const right = key();
    const sealed = loadSecretKeyring({ WEBHOOKS_SECRET_KEYS: `k1:${right}` }).seal('whk_1', SECRET);
    const wrong = key();
    const cases: [string, string, RegExp][] = [
      [`k1:${wrong}`, 'whk_1', /^the signing secret of whk_1 does not decrypt with key 'k1' of WEBHOOKS_SECRET_KEYS/],
      [`k9:${wrong}`, 'whk_1', /^the signing secret of whk_1 is encrypted with key 'k1', which WEBHOOKS_SECRET_KEYS does not list \(it lists 'k9'\)$/],
      [`k1:${right}`, 'whk_2', /does not decrypt with key 'k1'/],
    ];
    for (const [keys, id, message] of cases) {
      const keyring = loadSecretKeyring({ WEBHOOKS_SECRET_KEYS: keys });
      expect(() => keyring.open(id, sealed)).toThrow(SecretDecryptionError);
      expect(() => keyring.open(id, sealed)).toThrow(message);
      try {
        keyring.open(id, sealed);
      } catch (err) {
        for (const material of [right, wrong, SECRET]) expect((err as Error).message).not.toContain(material);
      }
    }
    const tampered = sealed.replace(/.$/, (c) => (c === 'A' ? 'B' : 'A'));
    expect(() => loadSecretKeyring({ WEBHOOKS_SECRET_KEYS: `k1:${right}` }).open('whk_1', tampered)).toThrow(SecretDecryptionError);
    expect(() => loadSecretKeyring({ WEBHOOKS_SECRET_KEYS: `k1:${right}` }).open('whk_1', 'garbage')).toThrow('unknown format');
  });

  it('names the variable in every configuration error and never shows key material', () => {
    const material = key();
    expect(configError('')).toMatch(/^WEBHOOKS_SECRET_KEYS is not set/);
    expect(() => loadSecretKeyring({})).toThrow('WEBHOOKS_SECRET_KEYS is not set');
    const messages = [
      configError(material),
      configError(`${material}:k1`),
      configError(`k1:${material.slice(0, 20)}`),
      configError(`k1:${material}!`),
      configError(`k1:${material},k1:${key()}`),
      configError(`k1:${randomBytes(16).toString('base64')}`),
    ];
    expect(messages).toEqual([
      'WEBHOOKS_SECRET_KEYS entry 1 must be <key id>:<base64 key>',
      'WEBHOOKS_SECRET_KEYS entry 1 has an invalid key id: use 1 to 32 of A-Z a-z 0-9 _ -',
      "WEBHOOKS_SECRET_KEYS key 'k1' must be the base64 of exactly 32 bytes (openssl rand -base64 32)",
      "WEBHOOKS_SECRET_KEYS key 'k1' must be the base64 of exactly 32 bytes (openssl rand -base64 32)",
      "WEBHOOKS_SECRET_KEYS lists key id 'k1' more than once",
      "WEBHOOKS_SECRET_KEYS key 'k1' must be the base64 of exactly 32 bytes (openssl rand -base64 32)",
    ]);
  });
});
