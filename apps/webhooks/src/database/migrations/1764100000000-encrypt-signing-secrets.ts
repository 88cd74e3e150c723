import { MigrationInterface, QueryRunner } from 'typeorm';
import { SecretKeyring } from '../../secrets/secret-keyring';
import { rewriteSecrets } from '../../secrets/rewrite-secrets';

/**
 * Encrypts signing secrets stored in plain text with the current key of WEBHOOKS_SECRET_KEYS. The
 * migration is built with the keyring the service was started with (see webhooksMigrations), so it
 * runs only once that variable has been read and checked; down decrypts them again.
 */
export function encryptSigningSecrets(keyring: SecretKeyring): new () => MigrationInterface {
  return class EncryptSigningSecrets1764100000000 implements MigrationInterface {
    name = 'EncryptSigningSecrets1764100000000';

    async up(q: QueryRunner): Promise<void> {
      await rewriteSecrets(
        (work) => work(q),
        'secret',
        (id, stored) => (keyring.keyIdOf(stored) === null ? keyring.seal(id, stored) : undefined),
      );
    }

    async down(q: QueryRunner): Promise<void> {
      await rewriteSecrets(
        (work) => work(q),
        'secret',
        (id, stored) => keyring.open(id, stored),
      );
    }
  };
}
