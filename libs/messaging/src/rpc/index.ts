export * from './crm-nats.client';
export * from './crm-nats.server';
export * from './rpc-clients.module';
export * from './rpc-errors';
export * from './rpc-caller';
export * from './compressed-messages';
export * from './split-replies';
export * from './request-deadline';
