import 'reflect-metadata';
import { onShutdownSignal, runMain, startTracing } from '@crm/common';
import { startEvents } from './events.app';

runMain('events', async () => {
  // Before anything else, so every span of start-up and after is exported (when an OTLP endpoint is set).
  const stopTracing = startTracing('events', process.env);
  const service = await startEvents();
  onShutdownSignal(async () => {
    await service.close();
    await stopTracing?.();
  });
});
