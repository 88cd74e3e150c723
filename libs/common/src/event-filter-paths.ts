import { ACTOR_TYPES, ActivityView, CHANGE_VIAS, CompanyView, ContactView, DealView, EVENT_CATALOG, EVENT_TYPES, EventType, TaskView } from '@crm/contracts';
import { EventFieldInfo, EventFieldType, EventPathResolver } from './event-filter';

/**
 * The paths a filter may name in the events of some types, from the payload classes the event catalog
 * names (the AsyncAPI document is generated from the same classes, through their @ApiProperty metadata).
 * `data.previous.*` and `data.current.*` of an update hold fields of the event's object, so there the
 * object's view stands in for the free-form object the payload class declares.
 */

/** The keys @nestjs/swagger keeps a class's properties under (its DECORATORS constants). */
const PROPERTIES_ARRAY = 'swagger/apiModelPropertiesArray';
const PROPERTY = 'swagger/apiModelProperties';

interface PropertyOptions {
  type?: unknown;
  isArray?: boolean;
  enum?: readonly unknown[] | Record<string, unknown>;
  format?: string;
  additionalProperties?: unknown;
}

/** A type's paths: a field's type, or a prefix below which any path is open (`custom_fields.`). */
interface PathTable {
  fields: Map<string, EventFieldInfo>;
  open: string[];
}

const OBJECT_VIEWS: Record<string, new () => object> = {
  contact: ContactView,
  company: CompanyView,
  deal: DealView,
  activity: ActivityView,
  task: TaskView,
};

const PRIMITIVES = new Map<unknown, EventFieldType>([
  [String, 'string'],
  [Number, 'number'],
  [Boolean, 'boolean'],
  [Date, 'datetime'],
]);

function isClass(value: unknown): value is new () => object {
  return (
    typeof value === 'function' &&
    !!(value as { prototype?: object }).prototype &&
    Reflect.hasMetadata(PROPERTIES_ARRAY, (value as { prototype: object }).prototype)
  );
}

/** Adds a class's properties under `prefix`, recursing into nested classes (arrays of them are walked element by element). */
function addClass(table: PathTable, cls: new () => object, prefix: string, replace: (path: string) => (new () => object) | undefined, depth = 0): void {
  if (depth > 4) return;
  const names: string[] = Reflect.getMetadata(PROPERTIES_ARRAY, cls.prototype) ?? [];
  for (const name of new Set(names.map((n) => n.replace(/^:/, '')))) {
    const options: PropertyOptions = Reflect.getMetadata(PROPERTY, cls.prototype, name) ?? {};
    const path = `${prefix}${name}`;
    const standIn = replace(path);
    if (standIn) {
      addClass(table, standIn, `${path}.`, () => undefined, depth + 1);
      continue;
    }
    let type = options.type;
    // Lazy references (`type: () => RelatedSummary`) are arrow functions: no prototype, called for the class.
    if (typeof type === 'function' && !PRIMITIVES.has(type) && !(type as { prototype?: object }).prototype) type = (type as () => unknown)();
    if (Array.isArray(type)) type = type[0];
    if (options.enum) {
      const values = (Array.isArray(options.enum) ? options.enum : Object.values(options.enum)).map(String);
      table.fields.set(path, { type: 'enum', values });
    } else if (isClass(type)) addClass(table, type, `${path}.`, replace, depth + 1);
    else if (type === 'object' || type === Object || options.additionalProperties) table.open.push(`${path}.`);
    else if (options.format === 'date-time') table.fields.set(path, { type: 'datetime' });
    else
      table.fields.set(path, {
        type: PRIMITIVES.get(type) ?? (type === 'number' || type === 'integer' ? 'number' : type === 'boolean' ? 'boolean' : 'string'),
      });
  }
}

function buildTable(type: EventType): PathTable {
  const table: PathTable = { fields: new Map(), open: [] };
  const data = EVENT_CATALOG[type].data as (new () => object) | null;
  if (!data) return table;
  const view = OBJECT_VIEWS[type.split('.')[0]];
  const replace = (path: string) => (view && (path === 'data.previous' || path === 'data.current') ? view : undefined);
  addClass(table, data, 'data.', replace);
  return table;
}

const TABLES = new Map<string, PathTable>(EVENT_TYPES.map((t) => [t, buildTable(t as EventType)]));

/** The paths every event has, whatever its type. */
const ENVELOPE = new Map<string, EventFieldInfo>([
  ['type', { type: 'enum', values: EVENT_TYPES }],
  ['actor.type', { type: 'enum', values: ACTOR_TYPES }],
  ['actor.id', { type: 'string' }],
  ['via', { type: 'enum', values: CHANGE_VIAS }],
  ['request_id', { type: 'string' }],
]);

/**
 * Resolves filter paths for events of the given types (every type when none): an envelope path, or a
 * `data.` path that at least one of the types carries. An unknown path's message lists a few that exist.
 */
export function eventPathResolver(types: readonly string[] | null | undefined): EventPathResolver {
  const tables = (types?.length ? types : EVENT_TYPES).map((t) => TABLES.get(t)).filter((t): t is PathTable => !!t);
  return (path) => {
    const envelope = ENVELOPE.get(path);
    if (envelope) return [envelope];
    if (!path.startsWith('data.')) return `'${path}' is not a path of an event; use type, actor.type, actor.id, via, request_id or data.<path>`;
    const found: EventFieldInfo[] = [];
    for (const table of tables) {
      const field = table.fields.get(path);
      if (field) found.push(field);
      else if (table.open.some((prefix) => path.startsWith(prefix) && path.length > prefix.length)) found.push({ type: 'any' });
    }
    if (found.length) return found;
    const known = [...new Set(tables.flatMap((t) => [...t.fields.keys(), ...t.open.map((p) => `${p}<name>`)]))];
    const shown = known.slice(0, 30).join(', ') + (known.length > 30 ? ', …' : '');
    return `'${path}' is in no payload of ${types?.length ? types.join(', ') : 'any event type'}; paths are: ${shown}`;
  };
}
