export * from './api-client';
export * from './processes';
export * from './stack';
export * from './webhooks-receiver';
export * from './fault-stack';
export * from './local-issuer';
