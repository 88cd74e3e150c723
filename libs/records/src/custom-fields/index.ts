export * from './built-in-custom-fields.entity';
export * from './built-in-custom-fields.service';
export * from './field-definitions';
export * from './field-enforcement';
export * from './custom-value-functions.migration';
export * from './custom-instant-indexes';
export * from './custom-value-functions-by-position.migration';
