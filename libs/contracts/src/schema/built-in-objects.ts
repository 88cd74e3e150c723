import { BUILT_IN_ENTRIES, ObjectEntry } from '../objects/registry';

/** A built-in object and the request classes that validate its writes: GET /schema is generated from them. */
export type BuiltInObject = ObjectEntry & { create: Function };

/** The built-in objects GET /schema describes, in its order. */
export const BUILT_IN_OBJECTS: readonly BuiltInObject[] = BUILT_IN_ENTRIES.filter(
  (o): o is BuiltInObject => o.capabilities.includes('schema') && Boolean(o.create),
);

/** Top-level paths of the API that are not objects, and line items, which agents aggregate by that name. */
const OTHER_PATHS = ['events', 'webhooks', 'apikeys', 'schema', 'capture', 'objects', 'records', 'fields', 'health', 'metrics', 'line_items'];

/** Slugs no custom object may take: the built-in objects and the other top-level paths of the API. */
export const RESERVED_SLUGS: ReadonlySet<string> = new Set([...BUILT_IN_ENTRIES.map((o) => o.slug), ...OTHER_PATHS]);
