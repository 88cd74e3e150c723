import { getMetadataStorage } from 'class-validator';
import type { ValidationMetadata } from 'class-validator/types/metadata/ValidationMetadata';
import type { FieldDefinition, ItemDefinition, SchemaFieldType } from './field-types';
import { schemaAnnotations, SchemaFieldOptions } from './schema-field';

/** Constraints that only decide whether the others run, or say nothing about the value. */
const CONDITIONS = new Set(['conditionalValidation', 'whitelistValidation', 'nestedValidation']);

/** 'first_name' → 'First name'. */
export function labelOf(name: string): string {
  const words = name.replace(/_id$/, '').split('_').join(' ');
  return words.charAt(0).toUpperCase() + words.slice(1);
}

function constraintName(meta: ValidationMetadata): string {
  return meta.name ?? meta.type;
}

/** The validated properties of a DTO class with their constraints, in declaration order (ancestors first). */
export function validatedProperties(type: Function): Map<string, ValidationMetadata[]> {
  const all = getMetadataStorage().getTargetValidationMetadatas(type, '', true, false);
  const byProperty = new Map<string, ValidationMetadata[]>();
  for (const meta of all) byProperty.set(meta.propertyName, [...(byProperty.get(meta.propertyName) ?? []), meta]);
  return byProperty;
}

function find(metas: ValidationMetadata[], name: string, each: boolean): ValidationMetadata | undefined {
  return metas.find((m) => constraintName(m) === name && !!m.each === each);
}

/** The value type the validators of one property (or of each item, with `each`) accept. */
function inferType(metas: ValidationMetadata[], each: boolean): SchemaFieldType {
  const has = (name: string) => !!find(metas, name, each);
  if (has('isEmail')) return 'email';
  if (has('isUrl') || has('isURL')) return 'url';
  if (has('isIn')) return 'enum';
  if (has('isRFC3339') || has('isIso8601') || has('isISO8601')) return 'datetime';
  if (has('isInt') || has('isNumber')) return 'number';
  if (has('isBoolean')) return 'boolean';
  if (!each && has('isArray')) return 'array';
  if (has('isMetadata') || has('isObject') || has('isCustomFieldValues')) return 'object';
  return 'string';
}

function regexSource(value: unknown): string | undefined {
  if (value instanceof RegExp) return value.source;
  return typeof value === 'string' ? value : undefined;
}

/** Length, range and pattern limits the validators apply. */
function bounds(metas: ValidationMetadata[], each: boolean): Partial<FieldDefinition> {
  const out: Partial<FieldDefinition> = {};
  const length = find(metas, 'isLength', each);
  if (length) {
    if (length.constraints[0] > 0) out.min_length = length.constraints[0];
    if (length.constraints[1] !== undefined) out.max_length = length.constraints[1];
  }
  const maxLength = find(metas, 'maxLength', each);
  if (maxLength) out.max_length = maxLength.constraints[0];
  const minLength = find(metas, 'minLength', each);
  if (minLength) out.min_length = minLength.constraints[0];
  const min = find(metas, 'min', each);
  if (min) out.min = min.constraints[0];
  const max = find(metas, 'max', each);
  if (max) out.max = max.constraints[0];
  const matches = find(metas, 'matches', each);
  const pattern = matches ? regexSource(matches.constraints[0]) : undefined;
  if (pattern) out.pattern = pattern;
  return out;
}

function describeItems(metas: ValidationMetadata[], annotation: SchemaFieldOptions | undefined): ItemDefinition {
  if (annotation?.items) return { type: 'object', fields: describeDto(annotation.items()) };
  const type = inferType(metas, true);
  const item: ItemDefinition = { type };
  const isIn = find(metas, 'isIn', true);
  if (isIn) item.enum_values = [...isIn.constraints[0]];
  const { max_length, pattern } = bounds(metas, true);
  if (max_length !== undefined) item.max_length = max_length;
  if (pattern !== undefined) item.pattern = pattern;
  return item;
}

/** The definition of one validated property, from its validators plus its @SchemaField annotation. */
export function describeProperty(name: string, metas: ValidationMetadata[], annotation?: SchemaFieldOptions): FieldDefinition {
  const values = metas.filter((m) => !CONDITIONS.has(constraintName(m)));
  const type = annotation?.type ?? (annotation?.reference_target ? 'reference' : inferType(values, false));
  const field: FieldDefinition = { name, label: annotation?.label ?? labelOf(name), type };
  if (find(values, 'isDefined', false)) field.required = true;
  if (annotation?.unique) field.unique = true;
  const isIn = find(values, 'isIn', false);
  if (isIn) field.enum_values = [...isIn.constraints[0]];
  if (annotation?.reference_target) field.reference_target = annotation.reference_target;
  if (find(values, 'isInt', false) && type === 'number') field.integer = true;
  if (type === 'array') field.items = describeItems(values, annotation);
  Object.assign(field, bounds(values, false));
  return field;
}

/** Field definitions of every validated property of a DTO class, except the custom-fields container. */
export function describeDto(type: Function): FieldDefinition[] {
  const annotations = schemaAnnotations(type);
  const fields: FieldDefinition[] = [];
  for (const [name, metas] of validatedProperties(type)) {
    if (annotations[name]?.customFieldsContainer) continue;
    fields.push(describeProperty(name, metas, annotations[name]));
  }
  return fields;
}

/** Create fields, then the fields only the update DTO accepts (marked `update_only`). */
export function describeWritable(create: Function, update?: Function): FieldDefinition[] {
  const fields = describeDto(create);
  if (!update) return fields;
  const known = new Set(fields.map((f) => f.name));
  for (const field of describeDto(update)) if (!known.has(field.name)) fields.push({ ...field, update_only: true });
  return fields;
}

/** Whether a DTO class has a custom-fields container property. */
export function hasCustomFieldsContainer(type: Function): boolean {
  return Object.values(schemaAnnotations(type)).some((a) => a.customFieldsContainer);
}
