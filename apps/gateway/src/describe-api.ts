import 'reflect-metadata';
import { runMain } from '@crm/common';
import { describeApiOffline, describeEventsOffline } from './gateway.app';

/**
 * Prints the OpenAPI document of the HTTP API (what GET /openapi.json serves), or with `--asyncapi` the
 * AsyncAPI document of the events on NATS, without starting anything.
 */
runMain('describe-api', async () => {
  const document = process.argv.includes('--asyncapi') ? await describeEventsOffline() : await describeApiOffline();
  process.stdout.write(`${JSON.stringify(document, null, 2)}\n`);
});
