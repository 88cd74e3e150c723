import 'reflect-metadata';
import type { SchemaFieldType } from './field-types';

/**
 * What class-validator metadata cannot tell about a property: its semantic type when the validator is
 * generic (a phone pattern, an integer that is money), uniqueness, the target of a reference, or that it
 * is the `custom_fields` container rather than a field.
 */
export interface SchemaFieldOptions {
  type?: SchemaFieldType;
  label?: string;
  unique?: boolean;
  reference_target?: string;
  /** For arrays of nested records: the class that describes each item. */
  items?: () => Function;
  /** The property carries the object's custom field values; the schema lists those fields instead. */
  customFieldsContainer?: boolean;
}

const SCHEMA_FIELDS = Symbol('crm:schema-fields');

type Annotations = Record<string, SchemaFieldOptions>;

export function SchemaField(options: SchemaFieldOptions): PropertyDecorator {
  return (target: object, property: string | symbol) => {
    const owner = target.constructor;
    const own: Annotations = Reflect.getOwnMetadata(SCHEMA_FIELDS, owner) ?? {};
    Reflect.defineMetadata(SCHEMA_FIELDS, { ...own, [String(property)]: options }, owner);
  };
}

/** The annotations of a class and its ancestors; a subclass's annotation of a property wins. */
export function schemaAnnotations(type: Function): Annotations {
  const chain: Function[] = [];
  for (let t: unknown = type; typeof t === 'function' && t !== Function.prototype; t = Object.getPrototypeOf(t)) chain.unshift(t as Function);
  return chain.reduce<Annotations>((all, t) => ({ ...all, ...(Reflect.getOwnMetadata(SCHEMA_FIELDS, t) ?? {}) }), {});
}
