export * from './api-client';
export * from './processes';
export * from './stack';
