import 'reflect-metadata';
import { onShutdownSignal, runMain } from '@crm/common';
import { startGateway } from './gateway.app';

runMain('gateway', async () => {
  const gateway = await startGateway();
  process.stdout.write(`CRM API listening on ${gateway.url}\n`);
  onShutdownSignal(() => gateway.close());
});
