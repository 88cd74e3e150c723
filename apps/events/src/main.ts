import 'reflect-metadata';
import { onShutdownSignal, runMain } from '@crm/common';
import { startEvents } from './events.app';

runMain('events', async () => {
  const service = await startEvents();
  onShutdownSignal(() => service.close());
});
