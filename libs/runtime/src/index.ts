export * from './health.indicators';
export * from './service-app';
export * from './request-outcome.interceptor';
export * from './rpc-health.controller';
export * from './service-main';
export * from './custom-fields';
export * from './import-rows';
