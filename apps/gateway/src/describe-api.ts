import 'reflect-metadata';
import { runMain } from '@crm/common';
import { describeApiOffline } from './gateway.app';

/** Prints the OpenAPI document of the HTTP API (what GET /openapi.json serves) without starting anything. */
runMain('describe-api', async () => {
  process.stdout.write(`${JSON.stringify(await describeApiOffline(), null, 2)}\n`);
});
