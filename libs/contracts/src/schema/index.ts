export * from './built-in-objects';
export * from './describe';
export * from './field-types';
export * from './field-values';
export * from './object-type.dto';
export * from './schema-field';
export * from './built-in-schema';
