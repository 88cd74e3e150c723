import { CreateOutbox1763800000000 } from '@crm/messaging';

export const webhooksEntities = [];
export const webhooksMigrations = [CreateOutbox1763800000000];
