import 'reflect-metadata';
import { onShutdownSignal, runMain, startTracing } from '@crm/common';
import { startGateway } from './gateway.app';

runMain('gateway', async () => {
  // Before anything else, so every span of start-up and after is exported (when an OTLP endpoint is set).
  const stopTracing = startTracing('gateway', process.env);
  const gateway = await startGateway();
  process.stdout.write(`CRM API listening on ${gateway.url}\n`);
  onShutdownSignal(async () => {
    await gateway.close();
    await stopTracing?.();
  });
});
