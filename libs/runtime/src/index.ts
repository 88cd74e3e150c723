export * from './health.indicators';
export * from './service-app';
