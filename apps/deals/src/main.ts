import 'reflect-metadata';
import { onShutdownSignal, runMain } from '@crm/common';
import { startDeals } from './deals.app';

runMain('deals', async () => {
  const service = await startDeals();
  onShutdownSignal(() => service.close());
});
