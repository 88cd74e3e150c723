import 'reflect-metadata';
import { onShutdownSignal, runMain } from '@crm/common';
import { startContacts } from './contacts.app';

runMain('contacts', async () => {
  const service = await startContacts();
  onShutdownSignal(() => service.close());
});
