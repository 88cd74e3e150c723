export * from './contacts';
export * from './deals';
export * from './events';
export * from './related';
export * from './rpc';
export * from './subjects';
export * from './webhooks';
export * from './schema';
