import { AssociationTypeView } from '../associations/associations';
import { ApiProperty } from '@nestjs/swagger';
import { WithUpdateChanges } from '../changes/update-changes';
/** The twelve value types a field definition may have (GET /schema, custom fields). */
export const FIELD_TYPES = ['string', 'number', 'boolean', 'date', 'datetime', 'email', 'url', 'phone', 'currency', 'enum', 'reference', 'array'] as const;
export type FieldType = (typeof FIELD_TYPES)[number];

/**
 * Built-in objects also have `metadata` (a free JSON object) and nested records (a pipeline's stages):
 * those are described with the extra type `object` and nested `fields`. Custom fields cannot use it.
 */
export type SchemaFieldType = FieldType | 'object';
export const SCHEMA_FIELD_TYPES: readonly SchemaFieldType[] = [...FIELD_TYPES, 'object'];

/** The types an array's items may have: any scalar type, not arrays of arrays. */
export const ARRAY_ITEM_TYPES = FIELD_TYPES.filter((t) => t !== 'array');
export type ArrayItemType = Exclude<FieldType, 'array'>;

/** Types a `unique` custom field may have: those with one comparable value. */
/** Types a `searchable` custom field may have: text a person reads. */
export const SEARCHABLE_FIELD_TYPES: readonly FieldType[] = ['string', 'email', 'url', 'phone'];

export const UNIQUE_FIELD_TYPES: readonly FieldType[] = ['string', 'number', 'date', 'datetime', 'email', 'url', 'phone', 'currency', 'enum', 'reference'];

export const ENFORCEMENT_LEVELS = ['none', 'soft', 'hard'] as const;
export type EnforcementLevel = (typeof ENFORCEMENT_LEVELS)[number];

export const OBJECT_TYPE_STATUSES = ['active', 'archived'] as const;
export type ObjectTypeStatus = (typeof OBJECT_TYPE_STATUSES)[number];

export const OBJECT_KINDS = ['built_in', 'custom'] as const;
export type ObjectKind = (typeof OBJECT_KINDS)[number];

/** The item definition of an array field, under the key `items`. */
export class ItemDefinition {
  @ApiProperty({ enum: SCHEMA_FIELD_TYPES })
  type!: SchemaFieldType;
  @ApiProperty({ type: [String], required: false })
  enum_values?: string[];
  @ApiProperty({ type: String, required: false })
  reference_target?: string;
  @ApiProperty({ type: Number, required: false })
  max_length?: number;
  @ApiProperty({ type: String, required: false })
  pattern?: string;
  /** For items of type `object`: the fields of each item. */
  @ApiProperty({ type: () => [FieldDefinition], required: false })
  fields?: FieldDefinition[];
}

/** One field as GET /schema describes it. Optional keys appear only when they apply (flags only when true). */
export class FieldDefinition {
  @ApiProperty({ type: String })
  name!: string;
  @ApiProperty({ type: String })
  label!: string;
  @ApiProperty({ enum: SCHEMA_FIELD_TYPES })
  type!: SchemaFieldType;
  @ApiProperty({ type: Boolean, enum: [true], required: false })
  required?: true;
  @ApiProperty({ type: Boolean, enum: [true], required: false })
  unique?: true;
  /** A custom object's field GET /search finds records by. */
  @ApiProperty({ type: Boolean, enum: [true], required: false })
  searchable?: true;
  @ApiProperty({ type: [String], required: false })
  enum_values?: string[];
  @ApiProperty({ type: String, required: false })
  reference_target?: string;
  /** For type `array`. */
  @ApiProperty({ type: () => ItemDefinition, required: false })
  items?: ItemDefinition;
  /** For type `object`, when its shape is fixed. */
  @ApiProperty({ type: () => [FieldDefinition], required: false })
  fields?: FieldDefinition[];
  /** For type `number`: only whole numbers are accepted. */
  @ApiProperty({ type: Boolean, enum: [true], required: false })
  integer?: true;
  @ApiProperty({ type: Number, required: false })
  min_length?: number;
  @ApiProperty({ type: Number, required: false })
  max_length?: number;
  @ApiProperty({ type: Number, required: false })
  min?: number;
  @ApiProperty({ type: Number, required: false })
  max?: number;
  /** A regular expression (JavaScript syntax) string values must match. */
  @ApiProperty({ type: String, required: false })
  pattern?: string;
  /** Accepted by update (PATCH) only, never on create. */
  @ApiProperty({ type: Boolean, enum: [true], required: false })
  update_only?: true;
  /** A custom field of a built-in object: sent and returned inside the record's `custom_fields` object. */
  @ApiProperty({ type: Boolean, enum: [true], required: false })
  custom?: true;
}

/** A custom field definition as stored and as sent to POST /objects and POST /objects/:slug/fields. */
export interface CustomFieldDefinition {
  name: string;
  label: string;
  type: FieldType;
  required?: true;
  unique?: true;
  searchable?: true;
  enum_values?: string[];
  reference_target?: string;
  items?: { type: ArrayItemType; enum_values?: string[]; reference_target?: string };
}

/** One entry of GET /schema and the body of the /objects endpoints. */
export class ObjectSchemaView {
  /** Custom objects only. */
  @ApiProperty({ type: String, required: false })
  id?: string;
  @ApiProperty({ type: String })
  name!: string;
  @ApiProperty({ type: String })
  slug!: string;
  @ApiProperty({ enum: OBJECT_KINDS })
  kind!: ObjectKind;
  /** Custom objects only. */
  @ApiProperty({ enum: OBJECT_TYPE_STATUSES, required: false })
  status?: ObjectTypeStatus;
  @ApiProperty({ enum: ENFORCEMENT_LEVELS })
  enforcement_level!: EnforcementLevel;
  /** Whether POST /objects/:slug/fields may add custom fields to this object. */
  @ApiProperty({ type: Boolean })
  accepts_custom_fields!: boolean;
  @ApiProperty({ type: () => [FieldDefinition] })
  fields!: FieldDefinition[];
  @ApiProperty({ type: String, format: 'date-time', required: false })
  created_at?: string;
  @ApiProperty({ type: String, format: 'date-time', required: false })
  updated_at?: string;
}

export class SchemaView {
  @ApiProperty({ type: () => [ObjectSchemaView] })
  objects!: ObjectSchemaView[];
  /** The association types (docs/associations.md) with their role labels. */
  @ApiProperty({ type: () => [AssociationTypeView] })
  associations!: AssociationTypeView[];
}

/** A record of a custom object. */
export class ObjectRecordView {
  @ApiProperty({ type: String })
  id!: string;
  @ApiProperty({ type: String })
  object!: string;
  @ApiProperty({ type: String })
  object_type_id!: string;
  @ApiProperty({ type: 'object', additionalProperties: true })
  values!: Record<string, unknown>;
  @ApiProperty({ type: String, format: 'date-time' })
  created_at!: string;
  @ApiProperty({ type: String, format: 'date-time' })
  updated_at!: string;
}

/** Under enforcement level `soft`, what a write accepted although it broke the field definitions. */
export class ValidationWarning {
  @ApiProperty({ type: String })
  field!: string;
  @ApiProperty({ type: String })
  code!: string;
  @ApiProperty({ type: String })
  message!: string;
}

/** Limits on custom objects, fields and values; documented in docs/schema.md. */
export const SchemaLimits = {
  objectName: 100,
  slugMax: 63,
  fieldName: 63,
  fieldLabel: 100,
  fieldsPerObject: 100,
  customObjectTypes: 200,
  enumValues: 100,
  enumValueLength: 100,
  stringValue: 10_000,
  arrayItems: 100,
  valuesBytes: 64 * 1024,
  valuesKeys: 150,
} as const;

export const SLUG_SHAPE = /^[a-z][a-z0-9_]{0,62}$/;
/**
 * Names every JavaScript object answers to (`constructor`, `toString`, `__proto__`, …, and `prototype`):
 * a lookup by such a name in a plain object finds an inherited member, not an entry, so no input key,
 * slug or field name may be one.
 */
export const INHERITED_NAMES: ReadonlySet<string> = new Set([...Object.getOwnPropertyNames(Object.prototype), 'prototype']);
export const FIELD_NAME_SHAPE = /^[a-z][a-z0-9_]{0,62}$/;

/** Data of object_type.created / object_type.updated; `object_type_id` is null for a built-in object gaining a field. */
export class ObjectTypeEventData {
  @ApiProperty({ type: String, nullable: true })
  object_type_id!: string | null;
  @ApiProperty({ type: String })
  slug!: string;
  /** object_type.updated only. */
  @ApiProperty({ type: [String], required: false })
  changed?: string[];
}

/** Data of object_record.created / updated / deleted. */
class ObjectRecordEventFields {
  @ApiProperty({ type: String })
  record_id!: string;
  @ApiProperty({ type: String })
  object_type_id!: string;
  @ApiProperty({ type: String })
  object!: string;
}

export class ObjectRecordEventData extends WithUpdateChanges(ObjectRecordEventFields) {}
