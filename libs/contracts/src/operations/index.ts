export * from './operation';
export * from './operations';
export * from './permissions';
export * from './readable';
export * from './grants';
export * from './secret-replies';
