import 'reflect-metadata';
import { onShutdownSignal, runMain, startTracing } from '@crm/common';
import { startWebhooks } from './webhooks.app';

runMain('webhooks', async () => {
  // Before anything else, so every span of start-up and after is exported (when an OTLP endpoint is set).
  const stopTracing = startTracing('webhooks', process.env);
  const service = await startWebhooks();
  onShutdownSignal(async () => {
    await service.close();
    await stopTracing?.();
  });
});
