import { CreateOutbox1763800000000 } from '@crm/messaging';

export const dealsEntities = [];
export const dealsMigrations = [CreateOutbox1763800000000];
