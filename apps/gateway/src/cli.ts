import 'reflect-metadata';
import { createLogger, CursorCodec, Logger, openDatabase, runMain } from '@crm/common';
import { ServiceName } from '@crm/contracts';
import { natsUser, OutboxService } from '@crm/messaging';
import { connect } from 'nats';
import { parseArgs } from 'util';
import { ApiKeysService } from './apikeys/api-keys.service';
import { publishKeyRevocation } from './apikeys/key-revocations';
import { GatewayConfig, loadGatewayConfig } from './config';
import { gatewayDatabase } from './gateway.app';

const USAGE = `usage:
  npm run apikey -- create --name NAME --scope read|read-write|capture-only [--expires-at 2030-01-01T00:00:00Z]
  npm run apikey -- list
  npm run apikey -- revoke --id key_...`;

/**
 * Manages API keys straight in the gateway's database, for the first key on a new install. Events
 * it records are published by the next running gateway.
 */
runMain('apikey', async () => {
  const { positionals, values } = parseArgs({
    allowPositionals: true,
    options: { name: { type: 'string' }, scope: { type: 'string' }, 'expires-at': { type: 'string' }, id: { type: 'string' } },
  });
  const [command] = positionals;
  if (!command || !['create', 'list', 'revoke'].includes(command)) {
    process.stderr.write(`${USAGE}\n`);
    process.exit(2);
  }
  const config = loadGatewayConfig({ ...process.env, CRM_BOOTSTRAP_API_KEY: undefined });
  const logger = createLogger('apikey', 'warn');
  const database = gatewayDatabase(config);
  const dataSource = await openDatabase(database);
  const outbox = new OutboxService({
    service: ServiceName.Gateway,
    namespace: config.namespace,
    logger,
    databaseUrl: config.databaseUrl,
    natsUrl: config.natsUrl,
    schema: database.schema,
  });
  const keys = new ApiKeysService(dataSource, outbox, new CursorCodec(config.cursorSecrets), config, logger);
  try {
    if (command === 'create') {
      const created = await keys.create({ request_id: 'cli' }, { name: values.name, scope: values.scope, expires_at: values['expires-at'] });
      process.stdout.write(`${created.data.key}\n`);
      process.stderr.write(`created ${created.data.id} (${created.data.scope}); the key is shown only this once\n`);
    } else if (command === 'list') {
      let cursor: string | undefined;
      do {
        const page = await keys.list({ cursor, limit: '200' });
        for (const k of page.data) process.stdout.write(`${k.id}\t${k.scope}\t…${k.last4}\t${k.name}\n`);
        cursor = page.next_cursor;
      } while (cursor);
    } else {
      await keys.revoke(values.id ?? '');
      process.stderr.write(`revoked ${values.id}\n`);
      await announceRevocation(config, values.id!, logger);
    }
  } catch (err) {
    const body = (err as { toBody?: () => { message: string } }).toBody?.();
    if (!body) throw err;
    process.stderr.write(`apikey: ${body.message}\n`);
    process.exitCode = 1;
  } finally {
    await dataSource.destroy();
  }
});

/**
 * Running gateways accept a key they verified recently from memory; tell them it is revoked. Should NATS
 * be unreachable, they still hear of it from the api_key.revoked event once the outbox is relayed.
 */
async function announceRevocation(config: GatewayConfig, keyId: string, logger: Logger): Promise<void> {
  const nc = await connect({ ...natsUser(config), servers: config.natsUrl, name: 'crm-apikey-cli', timeout: 2000, maxReconnectAttempts: 0 }).catch(
    () => undefined,
  );
  if (!nc) {
    logger.warn('NATS is unreachable: gateways will learn of the revocation from the event log');
    return;
  }
  try {
    await publishKeyRevocation(nc, config.namespace, keyId);
  } finally {
    await nc.close();
  }
}
