import { applyDecorators } from '@nestjs/common';
import { isEmail, IsOptional, isURL, ValidateBy, ValidationOptions } from 'class-validator';
import type { ArrayItemType, CustomFieldDefinition, FieldType, ValidationWarning } from './field-types';
import { SchemaLimits, SEARCHABLE_FIELD_TYPES, UNIQUE_FIELD_TYPES } from './field-types';
import { SchemaField } from './schema-field';

/** `+` then 8 to 15 digits, the first not 0 (E.164). */
export const E164 = /^\+[1-9][0-9]{7,14}$/;
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATETIME = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})$/;

type FieldIssue = ValidationWarning;

/** A reference value to look up: the caller checks that `id` names a record of `target`. */
export interface ReferenceToCheck {
  field: string;
  target: string;
  id: string;
}

export interface ValueCheck {
  issues: FieldIssue[];
  references: ReferenceToCheck[];
}

function validCalendarDate(year: string, month: string, day: string): boolean {
  const d = new Date(Date.UTC(Number(year), Number(month) - 1, Number(day)));
  return d.getUTCFullYear() === Number(year) && d.getUTCMonth() === Number(month) - 1 && d.getUTCDate() === Number(day);
}

function isDate(value: string): boolean {
  const m = DATE.exec(value);
  return !!m && validCalendarDate(m[1], m[2], m[3]);
}

function isDateTime(value: string): boolean {
  const m = DATETIME.exec(value);
  return !!m && validCalendarDate(m[1], m[2], m[3]) && Number(m[4]) < 24 && Number(m[5]) < 60 && Number(m[6]) < 60;
}

interface Typed {
  type: FieldType | ArrayItemType;
  enum_values?: string[];
  reference_target?: string;
}

/** Why one value does not fit its type, as an issue, or undefined. Reference values are queued for lookup. */
function checkOne(field: string, def: Typed, value: unknown, references: ReferenceToCheck[]): FieldIssue | undefined {
  const wrongType = (expected: string): FieldIssue => ({ field, code: 'invalid_type', message: `${field} must be ${expected}` });
  const invalid = (message: string): FieldIssue => ({ field, code: 'invalid_value', message: `${field} ${message}` });
  switch (def.type) {
    case 'string':
      if (typeof value !== 'string') return wrongType('a string');
      return value.length > SchemaLimits.stringValue ? invalid(`must be at most ${SchemaLimits.stringValue} characters`) : undefined;
    case 'number':
      return typeof value === 'number' && Number.isFinite(value) ? undefined : wrongType('a number');
    case 'boolean':
      return typeof value === 'boolean' ? undefined : wrongType('true or false');
    case 'date':
      if (typeof value !== 'string') return wrongType('a date string (YYYY-MM-DD)');
      return isDate(value) ? undefined : invalid('must be a calendar date YYYY-MM-DD, without a time');
    case 'datetime':
      if (typeof value !== 'string') return wrongType('an RFC 3339 date-time string');
      return isDateTime(value) ? undefined : invalid('must be an RFC 3339 date-time with a time zone, e.g. 2030-01-31T09:00:00Z');
    case 'email':
      if (typeof value !== 'string') return wrongType('an email address string');
      return value.length <= 254 && isEmail(value) ? undefined : invalid('must be a valid email address');
    case 'url':
      if (typeof value !== 'string') return wrongType('a URL string');
      return value.length <= 2048 && isURL(value, { protocols: ['http', 'https'], require_protocol: true, require_tld: false })
        ? undefined
        : invalid('must be an http or https URL');
    case 'phone':
      if (typeof value !== 'string') return wrongType('a phone number string');
      return E164.test(value) ? undefined : invalid('must be an E.164 phone number: + then 8 to 15 digits, e.g. +14155550123');
    case 'currency':
      return typeof value === 'number' && Number.isSafeInteger(value) ? undefined : wrongType('an integer number of cents');
    case 'enum':
      if (typeof value !== 'string') return wrongType('a string');
      return def.enum_values?.includes(value) ? undefined : invalid(`must be one of ${(def.enum_values ?? []).join(', ')}`);
    case 'reference':
      if (typeof value !== 'string' || value.length > 64) return wrongType(`the id of a ${def.reference_target} record`);
      references.push({ field, target: def.reference_target!, id: value });
      return undefined;
    case 'array':
      return wrongType('an array');
  }
}

/**
 * Checks values against field definitions. `partial` (updates): fields not sent are not checked, but a
 * required field sent as null is. Unknown keys are issues too. Reference ids are returned for lookup.
 */
export function checkFieldValues(defs: readonly CustomFieldDefinition[], values: Record<string, unknown>, partial: boolean): ValueCheck {
  const issues: FieldIssue[] = [];
  const references: ReferenceToCheck[] = [];
  const byName = new Map(defs.map((d) => [d.name, d]));
  for (const key of Object.keys(values)) {
    if (!byName.has(key)) issues.push({ field: key, code: 'unknown_field', message: `unknown field '${key}'` });
  }
  for (const def of defs) {
    const value = values[def.name];
    if (value === undefined && partial) continue;
    if (value === undefined || value === null) {
      if (def.required) issues.push({ field: def.name, code: 'required', message: `${def.name} is required` });
      continue;
    }
    if (def.type !== 'array') {
      const issue = checkOne(def.name, def, value, references);
      if (issue) issues.push(issue);
      continue;
    }
    if (!Array.isArray(value)) {
      issues.push({ field: def.name, code: 'invalid_type', message: `${def.name} must be an array` });
      continue;
    }
    if (value.length > SchemaLimits.arrayItems) {
      issues.push({ field: def.name, code: 'invalid_value', message: `${def.name} may hold at most ${SchemaLimits.arrayItems} items` });
      continue;
    }
    value.forEach((item, i) => {
      const issue = checkOne(`${def.name}.${i}`, def.items!, item, references);
      if (issue) issues.push(issue);
    });
  }
  return { issues, references };
}

/** Why a field definition is inconsistent (enum without values, reference without target...), per field path. */
export function definitionProblems(def: CustomFieldDefinition, path: string): FieldIssue[] {
  const problems: FieldIssue[] = [];
  const issue = (field: string, message: string) => problems.push({ field: `${path}.${field}`, code: 'invalid_value', message });
  const needs = (d: { type: string; enum_values?: string[]; reference_target?: string }, at: string) => {
    if (d.type === 'enum' && !d.enum_values?.length) issue(`${at}enum_values`, 'enum_values is required for type enum');
    if (d.type !== 'enum' && d.enum_values !== undefined) issue(`${at}enum_values`, 'enum_values is allowed for type enum only');
    if (d.type === 'reference' && !d.reference_target) issue(`${at}reference_target`, 'reference_target is required for type reference');
    if (d.type !== 'reference' && d.reference_target !== undefined) issue(`${at}reference_target`, 'reference_target is allowed for type reference only');
  };
  needs(def, '');
  if (def.type === 'array' && !def.items) issue('items', 'items is required for type array');
  if (def.type !== 'array' && def.items !== undefined) issue('items', 'items is allowed for type array only');
  if (def.items) needs(def.items, 'items.');
  if (def.unique && !UNIQUE_FIELD_TYPES.includes(def.type)) issue('unique', `unique is not available for type ${def.type}`);
  if (def.searchable && !SEARCHABLE_FIELD_TYPES.includes(def.type))
    issue('searchable', `searchable is available for types ${SEARCHABLE_FIELD_TYPES.join(', ')} only`);
  return problems;
}

/** The stored form of a definition: only the keys that apply, flags only when true. */
export function normaliseDefinition(input: {
  name: string;
  label?: string;
  type: FieldType;
  required?: boolean;
  unique?: boolean;
  searchable?: boolean;
  enum_values?: string[];
  reference_target?: string;
  items?: { type: ArrayItemType; enum_values?: string[]; reference_target?: string };
}): CustomFieldDefinition {
  const def: CustomFieldDefinition = { name: input.name, label: input.label ?? input.name, type: input.type };
  if (input.required) def.required = true;
  if (input.unique) def.unique = true;
  if (input.searchable) def.searchable = true;
  if (input.enum_values) def.enum_values = [...input.enum_values];
  if (input.reference_target) def.reference_target = input.reference_target;
  if (input.items) {
    def.items = { type: input.items.type };
    if (input.items.enum_values) def.items.enum_values = [...input.items.enum_values];
    if (input.items.reference_target) def.items.reference_target = input.items.reference_target;
  }
  return def;
}

/** Why a whole values object is too large to store, or undefined. Applies at every enforcement level. */
export function valuesSizeProblem(values: Record<string, unknown>): string | undefined {
  if (Object.keys(values).length > SchemaLimits.valuesKeys) return `may hold at most ${SchemaLimits.valuesKeys} keys`;
  if (Buffer.byteLength(JSON.stringify(values), 'utf8') > SchemaLimits.valuesBytes) return `may be at most ${SchemaLimits.valuesBytes} bytes of JSON`;
  return undefined;
}

/** `custom_fields` in a built-in object's body: a JSON object within the size limits; its fields are checked by the service. */
export function IsCustomFieldValues(options?: ValidationOptions): PropertyDecorator {
  const problem = (value: unknown) =>
    typeof value !== 'object' || value === null || Array.isArray(value) ? 'must be a JSON object' : valuesSizeProblem(value as Record<string, unknown>);
  return ValidateBy(
    {
      name: 'isCustomFieldValues',
      validator: {
        validate: (value) => problem(value) === undefined,
        defaultMessage: (args) => `${args?.property ?? 'custom_fields'} ${problem(args?.value) ?? 'is invalid'}`,
      },
    },
    options,
  );
}

/**
 * `custom_fields` of a built-in object's create or update body: optional (null clears them all), a JSON
 * object within the size limits, and marked as the container, so GET /schema lists the defined fields
 * instead of it.
 */
export function CustomFieldsInput(): PropertyDecorator {
  return applyDecorators(IsOptional(), SchemaField({ customFieldsContainer: true }), IsCustomFieldValues());
}
