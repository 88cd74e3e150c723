import { ConfigError, Env, optionalVar } from '@crm/common';
import { createCipheriv, createDecipheriv, randomBytes } from 'crypto';

export const SECRET_KEYS_VAR = 'WEBHOOKS_SECRET_KEYS';

const ALGORITHM = 'aes-256-gcm';
const KEY_BYTES = 32;
const IV_BYTES = 12;
const TAG_BYTES = 16;
const MAX_KEYS = 20;
const KEY_ID = /^[A-Za-z0-9_-]{1,32}$/;
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;
/** Marks a sealed value: `gcm1:<key id>:<iv>:<tag>:<ciphertext>`, each part base64. */
const SEALED_PREFIX = 'gcm1';
/** How signing secrets were stored before encryption at rest; still read, so a mixed fleet keeps working. */
const PLAIN_PREFIX = 'whsec_';

export class SecretDecryptionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SecretDecryptionError';
  }
}

interface Key {
  id: string;
  bytes: Buffer;
}

/**
 * The operator's keys for signing secrets at rest. The first key is the current one: every secret is
 * sealed with it. Any listed key opens what it sealed, so a key can be rotated by putting a new one
 * first, re-encrypting (`npm run webhook-secrets -- reencrypt`) and only then dropping the old one.
 *
 * Each value is sealed with AES-256-GCM under a fresh random IV, with the subscription id as
 * additional data, so a sealed value copied onto another subscription does not open.
 */
export class SecretKeyring {
  private readonly byId: Map<string, Key>;

  constructor(private readonly keys: readonly Key[]) {
    if (!keys.length) throw new Error('a keyring needs at least one key');
    this.byId = new Map(keys.map((k) => [k.id, k]));
  }

  /** The id of the key new values are sealed with. */
  get currentKeyId(): string {
    return this.keys[0].id;
  }

  get keyIds(): string[] {
    return this.keys.map((k) => k.id);
  }

  seal(subscriptionId: string, secret: string): string {
    const key = this.keys[0];
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv(ALGORITHM, key.bytes, iv, { authTagLength: TAG_BYTES });
    cipher.setAAD(Buffer.from(subscriptionId, 'utf8'));
    const ciphertext = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
    return [SEALED_PREFIX, key.id, iv.toString('base64'), cipher.getAuthTag().toString('base64'), ciphertext.toString('base64')].join(':');
  }

  /** The secret a stored value holds. Throws a SecretDecryptionError naming the key (never its bytes) when it cannot. */
  open(subscriptionId: string, stored: string): string {
    if (stored.startsWith(PLAIN_PREFIX)) return stored;
    const parts = stored.split(':');
    if (parts.length !== 5 || parts[0] !== SEALED_PREFIX) {
      throw new SecretDecryptionError(`the signing secret of ${subscriptionId} is stored in an unknown format`);
    }
    const [, keyId, iv, tag, ciphertext] = parts;
    const key = this.byId.get(keyId);
    if (!key) {
      throw new SecretDecryptionError(
        `the signing secret of ${subscriptionId} is encrypted with key '${keyId}', which ${SECRET_KEYS_VAR} does not list (it lists ${this.describeIds()})`,
      );
    }
    try {
      const decipher = createDecipheriv(ALGORITHM, key.bytes, Buffer.from(iv, 'base64'), { authTagLength: TAG_BYTES });
      decipher.setAAD(Buffer.from(subscriptionId, 'utf8'));
      decipher.setAuthTag(Buffer.from(tag, 'base64'));
      return Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64')), decipher.final()]).toString('utf8');
    } catch {
      throw new SecretDecryptionError(
        `the signing secret of ${subscriptionId} does not decrypt with key '${keyId}' of ${SECRET_KEYS_VAR}: that key is not the one it was encrypted with, or the stored value was altered`,
      );
    }
  }

  /** The id of the key a stored value was sealed with; null for a value stored in plain text. */
  keyIdOf(stored: string): string | null {
    return stored.startsWith(PLAIN_PREFIX) ? null : (stored.split(':')[1] ?? null);
  }

  /** Whether a stored value is sealed with the current key. */
  isCurrent(stored: string): boolean {
    return this.keyIdOf(stored) === this.currentKeyId;
  }

  private describeIds(): string {
    return this.keys.map((k) => `'${k.id}'`).join(', ');
  }
}

/**
 * Reads WEBHOOKS_SECRET_KEYS: `id:base64key` entries separated by commas, the current key first. Errors
 * name the variable and the entry, never a key's bytes.
 */
export function loadSecretKeyring(env: Env): SecretKeyring {
  const raw = optionalVar(env, 'WEBHOOKS_SECRET_KEYS');
  if (raw === undefined) {
    throw new ConfigError(
      `${SECRET_KEYS_VAR} is not set: it holds the key that encrypts webhook signing secrets at rest, e.g. k1:<output of openssl rand -base64 32>`,
    );
  }
  const entries = raw.split(',').map((e) => e.trim());
  if (entries.length > MAX_KEYS) throw new ConfigError(`${SECRET_KEYS_VAR} may list at most ${MAX_KEYS} keys, got ${entries.length}`);
  const keys: Key[] = [];
  entries.forEach((entry, index) => {
    const where = `${SECRET_KEYS_VAR} entry ${index + 1}`;
    const colon = entry.indexOf(':');
    if (colon < 0) throw new ConfigError(`${where} must be <key id>:<base64 key>`);
    const id = entry.slice(0, colon);
    const encoded = entry.slice(colon + 1);
    if (!KEY_ID.test(id)) throw new ConfigError(`${where} has an invalid key id: use 1 to 32 of A-Z a-z 0-9 _ -`);
    if (keys.some((k) => k.id === id)) throw new ConfigError(`${SECRET_KEYS_VAR} lists key id '${id}' more than once`);
    const bytes = BASE64.test(encoded) ? Buffer.from(encoded, 'base64') : Buffer.alloc(0);
    if (bytes.length !== KEY_BYTES) {
      throw new ConfigError(`${SECRET_KEYS_VAR} key '${id}' must be the base64 of exactly ${KEY_BYTES} bytes (openssl rand -base64 32)`);
    }
    keys.push({ id, bytes });
  });
  return new SecretKeyring(keys);
}
