import { ClassConstructor } from 'class-transformer';
import { validationMetadatasToSchemas } from 'class-validator-jsonschema';

export type JsonSchema = Record<string, unknown>;

let schemas: Record<string, JsonSchema> | undefined;

/**
 * The JSON Schema of a request class, read from the same class-validator decorators the owning service
 * validates with, so a tool's input schema cannot drift from the API's rules. References the generator
 * cannot resolve (free-form objects, dates) become open schemas; the service still validates them.
 */
export function schemaOf(type: ClassConstructor<object>): JsonSchema {
  schemas ??= validationMetadatasToSchemas() as Record<string, JsonSchema>;
  const schema = schemas[type.name];
  if (!schema) throw new Error(`No validation metadata for ${type.name}`);
  return inlineReferences(schema, schemas) as JsonSchema;
}

function inlineReferences(value: unknown, all: Record<string, JsonSchema>): unknown {
  if (Array.isArray(value)) return value.map((item) => inlineReferences(item, all));
  if (!value || typeof value !== 'object') return value;
  const ref = (value as { $ref?: string }).$ref;
  if (typeof ref === 'string') {
    const target = all[ref.replace('#/definitions/', '')];
    return target?.properties ? inlineReferences(target, all) : {};
  }
  return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, inlineReferences(item, all)]));
}

/** An object schema made of a request class's fields plus extra ones (a path id, an object slug). */
export function inputSchema(options: {
  extra?: Record<string, JsonSchema>;
  required?: string[];
  from?: ClassConstructor<object>;
  omit?: string[];
}): JsonSchema {
  const base = options.from ? schemaOf(options.from) : { properties: {} };
  const omitted = new Set(options.omit ?? []);
  const keep = <T>(entries: Array<[string, T]>) => entries.filter(([name]) => !omitted.has(name));
  const properties = { ...(options.extra ?? {}), ...Object.fromEntries(keep(Object.entries((base.properties as Record<string, JsonSchema>) ?? {}))) };
  const required = [...(options.required ?? []), ...((base.required as string[] | undefined) ?? []).filter((name) => !omitted.has(name))];
  return { type: 'object', properties, ...(required.length ? { required } : {}), additionalProperties: false };
}
