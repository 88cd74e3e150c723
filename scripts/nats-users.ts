import { ConfigError, runMain } from '@crm/common';
import { natsAuthorizationConfig } from '@crm/contracts';

// `npm run nats-users -- [namespace]`: the nats-server authorization block of a deployment's CRM_NAMESPACE
// (default crm), with one user per process; deploy/nats/crm-users.conf is its output for `crm`.
runMain('nats-users', async () => {
  const namespace = process.argv[2] ?? 'crm';
  if (!/^[a-z][a-z0-9_]{0,39}$/.test(namespace)) throw new ConfigError(`the namespace must be a CRM_NAMESPACE value, got '${namespace}'`);
  process.stdout.write(natsAuthorizationConfig(namespace));
});
