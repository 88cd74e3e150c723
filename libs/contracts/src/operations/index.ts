export * from './operation';
export * from './operations';
