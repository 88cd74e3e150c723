export * from './imports';
export * from './row-body';
