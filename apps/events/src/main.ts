import 'reflect-metadata';
import { onShutdownSignal, runMain } from '@crm/common';
import { startEvents } from './events.service-definition';

runMain('events', async () => {
  const service = await startEvents();
  onShutdownSignal(() => service.close());
});
