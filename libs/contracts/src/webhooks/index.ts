// Request and response shapes of the webhooks service.
export * from './webhook.dto';
export * from './webhook.views';
