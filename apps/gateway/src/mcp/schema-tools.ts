import { BUILT_IN_ENTRIES, Capability, ObjectEntry } from '@crm/contracts';
import type { McpTool } from './mcp-tools';
import { ASSOCIATIONS } from './objects';

/** What an agent reads of a capability; GET /schema, not describe_schema, is what `schema` is about. */
const SHOWN: Partial<Record<Capability, string>> = {
  customFields: 'custom_fields',
  referenceable: 'referenceable',
  importable: 'importable',
  queryable: 'query',
  batchable: 'upsert',
  history: 'history',
};

function brief(object: ObjectEntry) {
  return {
    slug: object.slug,
    kind: object.kind,
    one: object.one,
    many: object.many,
    capabilities: object.capabilities.flatMap((capability) => SHOWN[capability] ?? []),
  };
}

/**
 * The objects from the registry and the live custom objects, briefly: slug, nouns and what each takes
 * part in. One object's fields come from describe_object, the whole schema from GET /schema.
 */
export const DESCRIBE_SCHEMA: McpTool = {
  name: 'describe_schema',
  title: 'Describe the CRM schema',
  description:
    "The objects (built-in and custom): slug, nouns and capabilities (query, upsert, custom_fields, history…), and the association pairs. describe_object gives one object's fields.",
  access: 'read',
  // It reads the live schema as GET /schema does, so it needs what that route needs.
  resource: 'schema',
  idempotent: true,
  checksArguments: true,
  input: { type: 'object', properties: {}, additionalProperties: false },
  run: async (_args, context) => ({
    data: {
      objects: [...BUILT_IN_ENTRIES, ...(await context.customObjects())].map(brief),
      associations: Object.keys(ASSOCIATIONS),
    },
  }),
};
