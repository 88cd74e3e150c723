export * from './health.indicators';
export * from './service-app';
export * from './rpc-health.controller';
