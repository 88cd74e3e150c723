import { hasCapability, OBJECT_SERVICES, ObjectService, SlugWith, slugsWith } from '../objects/registry';
import { BUILT_IN_OBJECTS, BuiltInObject } from './built-in-objects';
import { describeWritable } from './describe';
import type { CustomFieldDefinition, EnforcementLevel, FieldDefinition, ObjectSchemaView } from './field-types';

/**
 * Built-in objects that take custom fields, each with the service that owns its records, and so its custom
 * field definitions and values, listed by service. The others (stages, users) say so in GET /schema.
 */
export type CustomFieldBuiltIn = SlugWith<'customFields'>;
export type CustomFieldService = ObjectService;
export const CUSTOM_FIELD_OWNERS = Object.fromEntries(
  OBJECT_SERVICES.flatMap((service) => slugsWith('customFields', service).map((slug) => [slug, service])),
) as Readonly<Record<CustomFieldBuiltIn, CustomFieldService>>;

export function acceptsCustomFields(slug: string): slug is CustomFieldBuiltIn {
  return hasCapability(slug, 'customFields');
}

/** The built-in objects whose custom fields `service` keeps. */
export function customFieldBuiltInsOf(service: CustomFieldService): CustomFieldBuiltIn[] {
  return slugsWith('customFields', service);
}

export function builtInObject(slug: string): BuiltInObject | undefined {
  return BUILT_IN_OBJECTS.find((o) => o.slug === slug);
}

/** A built-in object's custom fields as its owner stores them: the definitions and their enforcement level. */
export interface BuiltInCustomFieldsState {
  fields: readonly CustomFieldDefinition[];
  enforcementLevel: EnforcementLevel;
}

export const NO_CUSTOM_FIELDS: BuiltInCustomFieldsState = { fields: [], enforcementLevel: 'hard' };

/** Field definitions of a built-in object are generated from its request validators, never written by hand. */
const builtInFields = new Map(BUILT_IN_OBJECTS.map((o) => [o.slug, describeWritable(o.create, o.update)]));

export function fieldView(def: CustomFieldDefinition, custom: boolean): FieldDefinition {
  const view: FieldDefinition = { ...def, ...(def.items ? { items: { ...def.items } } : {}) };
  if (custom) view.custom = true;
  return view;
}

export function presentBuiltInObject(object: BuiltInObject, custom: BuiltInCustomFieldsState): ObjectSchemaView {
  return {
    name: object.name,
    slug: object.slug,
    kind: 'built_in',
    // Applies to the custom fields; built-in fields are always validated (hard).
    enforcement_level: custom.enforcementLevel,
    accepts_custom_fields: acceptsCustomFields(object.slug),
    fields: [...builtInFields.get(object.slug)!, ...custom.fields.map((f) => fieldView(f, true))],
  };
}

/** Names a custom field of the object may not take: its built-in fields and the `custom_fields` container. */
export function builtInFieldNames(slug: string): Set<string> {
  return new Set([...(builtInFields.get(slug) ?? []).map((f) => f.name), 'custom_fields']);
}
