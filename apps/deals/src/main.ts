import 'reflect-metadata';
import { onShutdownSignal, runMain, startTracing } from '@crm/common';
import { startDeals } from './deals.app';

runMain('deals', async () => {
  // Before anything else, so every span of start-up and after is exported (when an OTLP endpoint is set).
  const stopTracing = startTracing('deals', process.env);
  const service = await startDeals();
  onShutdownSignal(async () => {
    await service.close();
    await stopTracing?.();
  });
});
