// Request and response shapes of the webhooks service.
export * from './metadata';
export * from './webhook.dto';
export * from './webhook.views';
