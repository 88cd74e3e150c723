import 'reflect-metadata';
import { loadBaseConfig, openDatabase, runMain } from '@crm/common';
import { ServiceName } from '@crm/contracts';
import { webhooksEntities, webhooksMigrations } from './database';
import { reencryptSecrets, secretKeyUsage } from './secrets/reencrypt';
import { loadSecretKeyring, SECRET_KEYS_VAR, SecretDecryptionError } from './secrets/secret-keyring';

const USAGE = `usage (with DATABASE_URL and ${SECRET_KEYS_VAR} as the webhooks service has them):
  npm run webhook-secrets -- status      how many stored signing secrets each key encrypts
  npm run webhook-secrets -- reencrypt   encrypt every stored signing secret with the current (first) key`;

/**
 * Key rotation for signing secrets at rest: after a new key is put first in WEBHOOKS_SECRET_KEYS (and
 * every replica restarted with it), `reencrypt` moves all stored secrets onto it; then the old key can
 * be removed. Safe to run while the service runs, and to run again.
 */
runMain('webhook-secrets', async () => {
  const [command] = process.argv.slice(2);
  if (command !== 'status' && command !== 'reencrypt') {
    process.stderr.write(`${USAGE}\n`);
    process.exit(2);
  }
  const config = loadBaseConfig(process.env);
  const keyring = loadSecretKeyring(process.env);
  const dataSource = await openDatabase({
    url: config.databaseUrl,
    schema: ServiceName.Webhooks,
    entities: webhooksEntities,
    migrations: webhooksMigrations(keyring),
    poolSize: 2,
    migrationsMode: config.databaseMigrations,
  });
  try {
    if (command === 'reencrypt') {
      const rewritten = await reencryptSecrets(dataSource, keyring);
      process.stderr.write(`re-encrypted ${rewritten} signing secret(s) with key '${keyring.currentKeyId}'\n`);
    }
    for (const { keyId, count } of await secretKeyUsage(dataSource)) {
      process.stdout.write(`${keyId === null ? '(plain text)' : keyId}\t${count}\n`);
    }
  } catch (err) {
    if (!(err instanceof SecretDecryptionError)) throw err;
    process.stderr.write(`webhook-secrets: ${err.message}\n`);
    process.exitCode = 1;
  } finally {
    await dataSource.destroy();
  }
});
