import 'reflect-metadata';
import { onShutdownSignal, runMain, startTracing } from '@crm/common';
import { startContacts } from './contacts.app';

runMain('contacts', async () => {
  // Before anything else, so every span of start-up and after is exported (when an OTLP endpoint is set).
  const stopTracing = startTracing('contacts', process.env);
  const service = await startContacts();
  onShutdownSignal(async () => {
    await service.close();
    await stopTracing?.();
  });
});
