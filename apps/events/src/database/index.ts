import { CreateOutbox1763800000000 } from '@crm/messaging';

export const eventsEntities = [];
export const eventsMigrations = [CreateOutbox1763800000000];
