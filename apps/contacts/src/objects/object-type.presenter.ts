import { BUILT_IN_OBJECTS, BuiltInObject, CustomFieldDefinition, describeWritable, EnforcementLevel, FieldDefinition, ObjectRecordView, ObjectSchemaView } from '@crm/contracts';
import { ObjectRecord, ObjectType } from './object-type.entity';

/** Built-in objects of this service that accept custom fields; the others say so in GET /schema. */
export const CUSTOM_FIELD_BUILT_INS = ['contacts', 'companies', 'activities', 'tasks'] as const;
export type CustomFieldBuiltIn = (typeof CUSTOM_FIELD_BUILT_INS)[number];

export function acceptsCustomFields(slug: string): slug is CustomFieldBuiltIn {
  return (CUSTOM_FIELD_BUILT_INS as readonly string[]).includes(slug);
}

export function builtInObject(slug: string): BuiltInObject | undefined {
  return BUILT_IN_OBJECTS.find((o) => o.slug === slug);
}

function fieldView(def: CustomFieldDefinition, custom: boolean): FieldDefinition {
  const view: FieldDefinition = { ...def, ...(def.items ? { items: { ...def.items } } : {}) };
  if (custom) view.custom = true;
  return view;
}

/** Field definitions of a built-in object are generated from its request validators, never written by hand. */
const builtInFields = new Map(BUILT_IN_OBJECTS.map((o) => [o.slug, describeWritable(o.create, o.update)]));

/** How a built-in object's custom fields are stored: its definitions and their enforcement level. */
export interface BuiltInCustomFieldsState {
  fields: readonly CustomFieldDefinition[];
  enforcementLevel: EnforcementLevel;
}

export function presentBuiltInObject(object: BuiltInObject, custom: BuiltInCustomFieldsState): ObjectSchemaView {
  const customFields = custom.fields;
  return {
    name: object.name,
    slug: object.slug,
    kind: 'built_in',
    // Applies to the custom fields; built-in fields are always validated (hard).
    enforcement_level: custom.enforcementLevel,
    accepts_custom_fields: acceptsCustomFields(object.slug),
    fields: [...builtInFields.get(object.slug)!, ...customFields.map((f) => fieldView(f, true))],
  };
}

export function builtInFieldNames(slug: string): Set<string> {
  return new Set((builtInFields.get(slug) ?? []).map((f) => f.name));
}

export function presentObjectType(type: ObjectType): ObjectSchemaView {
  return {
    id: type.id,
    name: type.name,
    slug: type.slug,
    kind: 'custom',
    status: type.status,
    enforcement_level: type.enforcementLevel,
    accepts_custom_fields: true,
    fields: type.fields.map((f) => fieldView(f, false)),
    created_at: type.createdAt.toISOString(),
    updated_at: type.updatedAt.toISOString(),
  };
}

export function presentRecord(record: ObjectRecord, type: ObjectType): ObjectRecordView {
  return {
    id: record.id,
    object: type.slug,
    object_type_id: type.id,
    values: record.values ?? {},
    created_at: record.createdAt.toISOString(),
    updated_at: record.updatedAt.toISOString(),
  };
}
