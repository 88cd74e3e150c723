import 'reflect-metadata';
import { onShutdownSignal, runMain } from '@crm/common';
import { startWebhooks } from './webhooks.app';

runMain('webhooks', async () => {
  const service = await startWebhooks();
  onShutdownSignal(() => service.close());
});
