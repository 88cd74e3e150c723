export * from './config';
export * from './database';
export * from './errors';
export * from './ids';
export * from './logger';
export * from './pagination';
export * from './startup';
export * from './validation';
