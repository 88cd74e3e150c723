import { CreateOutbox1763800000000 } from '@crm/messaging';

export const contactsEntities = [];
export const contactsMigrations = [CreateOutbox1763800000000];
