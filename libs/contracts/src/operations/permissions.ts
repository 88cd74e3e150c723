import { BUILT_IN_ENTRIES, builtInEntry } from '../objects/registry';
import type { ApiScope } from '../rpc';

/** The resources records are read and written under: each built-in object's (a stage's is its pipeline's) and `objects`, every custom object's. */
const OBJECT_RESOURCES: readonly string[] = [...new Set(BUILT_IN_ENTRIES.map((o) => o.permission ?? o.slug)), 'objects'];

/**
 * Permissions (docs/api.md, "Permissions"): `<resource>:<action>`, `*` standing for every resource or
 * every action. A key holds a set of them; each operation needs one.
 */
export const PERMISSION_RESOURCES: readonly string[] = [...OBJECT_RESOURCES, 'schema', 'events', 'exports', 'webhooks', 'imports', 'apikeys', 'capture'];
export const PERMISSION_ACTIONS = ['read', 'write', 'delete'] as const;
/**
 * Resources `*` does not stand for: a key holds them only by name (`privacy:delete`), so no named scope
 * (`read-write` is `*:*`) and no key made before them gains them (docs/privacy.md, "Who may erase").
 */
export const NAMED_ONLY_RESOURCES: readonly string[] = ['privacy'];
export type PermissionAction = (typeof PERMISSION_ACTIONS)[number];

/** What an operation needs: `resource` may be `objects.:slug`, named by the request's `slug` parameter. */
export interface RequiredPermission {
  resource: string;
  action: PermissionAction;
  /** A batch: with `operation: delete` it needs `delete` instead of `write`. */
  batch?: boolean;
  /** A query or aggregation: paths in its body that enter another object need read on that object too. */
  paths?: boolean;
  /** An export: it copies every object its body's `objects` names, so it needs read on each of them too. */
  exported?: boolean;
  /**
   * It answers only what the caller may read (GET /search, GET /changes): read on any object lets it in,
   * and the owning service narrows its answer to the objects the caller may read.
   */
  narrowed?: boolean;
  /**
   * Other resources whose records the answer shows, each needing `read` too: `GET /deals/:id/contacts`
   * lists contacts, the pipeline report sums deals. An empty list says the answer shows only the
   * resource's own records; a read of a sub-resource must say which (see `subResourceReads`).
   */
  reads?: readonly string[];
}

/** The named scopes, as the permission sets they always meant. */
export const SCOPE_PERMISSIONS: Record<ApiScope, readonly string[]> = {
  read: ['*:read'],
  'read-write': ['*:*'],
  'capture-only': ['capture:write'],
};

const SLUG = /^[a-z][a-z0-9_]{0,62}$/;
export const MAX_PERMISSIONS = 50;

/** Why a permission string is not one, or undefined when it is. */
export function permissionProblem(permission: unknown): string | undefined {
  if (typeof permission !== 'string') return 'must be a string';
  const [resource, action, ...rest] = permission.split(':');
  if (rest.length || action === undefined) return `'${permission}' is not <resource>:<action>`;
  const known =
    resource === '*' ||
    PERMISSION_RESOURCES.includes(resource) ||
    NAMED_ONLY_RESOURCES.includes(resource) ||
    (resource.startsWith('objects.') && SLUG.test(resource.slice(8)));
  if (!known) return `'${resource}' is not a resource (${PERMISSION_RESOURCES.join(', ')}, objects.<slug> or *)`;
  if (action !== '*' && !(PERMISSION_ACTIONS as readonly string[]).includes(action)) return `'${action}' is not an action (read, write, delete or *)`;
  return undefined;
}

function resourceCovers(held: string, wanted: string): boolean {
  // `objects` covers every custom object's records, `objects.<slug>` one of them.
  return (held === '*' && !NAMED_ONLY_RESOURCES.includes(wanted)) || held === wanted || (held === 'objects' && wanted.startsWith('objects.'));
}

/** Whether `permissions` allow what `required` asks: a narrowed read lets in a caller who may read some object. */
export function permitsRequired(permissions: readonly string[], required: RequiredPermission): boolean {
  return required.narrowed ? permitsOnSomeObject(permissions, 'read') : permits(permissions, required.resource, required.action);
}

/** Whether `permissions` allow `action` on `resource`. */
export function permits(permissions: readonly string[], resource: string, action: PermissionAction): boolean {
  return permissions.some((permission) => {
    const colon = permission.indexOf(':');
    const heldAction = permission.slice(colon + 1);
    return (heldAction === '*' || heldAction === action) && resourceCovers(permission.slice(0, colon), resource);
  });
}

/** Whether `permissions` allow `action` on the records of at least one object: a generic record tool is then offered. */
export function permitsOnSomeObject(permissions: readonly string[], action: PermissionAction): boolean {
  return permissions.some((permission) => {
    const [resource, held] = permission.split(':');
    return (held === '*' || held === action) && (resource === '*' || OBJECT_RESOURCES.includes(resource) || resource.startsWith('objects.'));
  });
}

/**
 * An operation's permission, derived from its route: the resource is the path's first segment (a custom
 * object's records are `objects.<slug>`, the object definitions under /objects are `schema`); the action
 * is `read` for reads, `delete` for DELETE and merges (a merge removes a record), `write` otherwise. A
 * batch's delete items are checked against its body at request time. /search and /changes reach every
 * object: they need read on some object, and answer only the objects the caller may read.
 */
export function derivePermission(method: string, path: string, name: string, access: string): RequiredPermission | undefined {
  if (access === 'public' || access === 'any-key') return undefined;
  const segments = path.split('/').filter(Boolean);
  const first = segments[0] ?? '';
  let resource = first;
  if (first === 'objects') resource = segments[2] === 'records' ? 'objects.:slug' : 'schema';
  if (first === 'search' || first === 'changes') resource = '*';
  const action: PermissionAction = access === 'read' ? 'read' : method === 'DELETE' || name.endsWith('.merge') ? 'delete' : 'write';
  const paths = name.endsWith('.query') || name.endsWith('.aggregate');
  const narrowed = resource === '*' && action === 'read';
  const reads = action === 'read' ? subResourceReads(segments, resource) : undefined;
  return {
    resource,
    action,
    ...(name.endsWith('.batch') ? { batch: true } : {}),
    ...(paths ? { paths: true } : {}),
    ...(narrowed ? { narrowed } : {}),
    ...(reads ? { reads } : {}),
  };
}

/** The resource an object's records are read and written under: its own slug, or its entry's (a stage's is its pipeline's). */
function resourceOfSlug(slug: string): string | undefined {
  const entry = builtInEntry(slug);
  return entry && (entry.permission ?? entry.slug);
}

/**
 * What a read of a sub-resource shows besides its owner: `/deals/:id/contacts` lists contacts, so it reads
 * `contacts` too. A sub-resource named after an object reads that object; any other (`/deals/:id/history`,
 * `/pipelines/:id/report`) is left undefined for its route to declare, and a test holds every such route to it.
 */
export function subResourceReads(segments: readonly string[], resource: string): string[] | undefined {
  if (segments[0] === 'objects' || segments.length < 3 || !segments[1].startsWith(':')) return undefined;
  const shown = resourceOfSlug(segments[2]);
  return shown === undefined ? undefined : shown === resource ? [] : [shown];
}

/** The permission with the request's slug in place: `objects.:slug` -> `objects.invoices`. */
export function resolvePermission(required: RequiredPermission, params: Record<string, string | undefined>, body?: unknown): RequiredPermission {
  const resource = required.resource === 'objects.:slug' ? `objects.${params.slug ?? ''}` : required.resource;
  const deletes = required.batch && (body as { operation?: unknown } | null)?.operation === 'delete';
  return { resource, action: deletes ? 'delete' : required.action, ...(required.narrowed ? { narrowed: true } : {}) };
}

/**
 * Everything a request needs, the first one the caller lacks decides the refusal: the operation's own
 * permission with the request's slug in place, read on each object the answer shows (`reads`), and for a
 * query or aggregation read on each object its paths enter. HTTP routes and MCP tools both ask this.
 */
export function permissionsNeeded(declared: RequiredPermission, params: Record<string, string | undefined>, body?: unknown): RequiredPermission[] {
  const reads = (declared.reads ?? []).map((resource): RequiredPermission => ({ resource, action: 'read' }));
  return [
    resolvePermission(declared, params, body),
    ...reads,
    ...(declared.paths ? relationReads(body) : []),
    ...(declared.exported ? exportedReads(body) : []),
  ];
}

/** Read on each object an export's body names, as the registry names its resource; an unknown one is left to the body's validation. */
export function exportedReads(body: unknown): RequiredPermission[] {
  const objects = (body as { objects?: unknown } | null)?.objects;
  if (!Array.isArray(objects)) return [];
  const resources = objects.slice(0, MAX_PATHS).flatMap((o) => {
    const resource = typeof o === 'string' ? resourceOfSlug(o) : undefined;
    return resource === undefined ? [] : [resource];
  });
  return [...new Set(resources)].map((resource) => ({ resource, action: 'read' }));
}

/** The first of `needed` that `permissions` do not allow. */
export function firstLacking(permissions: readonly string[], needed: readonly RequiredPermission[]): RequiredPermission | undefined {
  return needed.find((p) => !permitsRequired(permissions, p));
}

export const describePermission = (p: RequiredPermission) => `${p.resource}:${p.action}`;

/** The object a one-hop relation of a built-in object reads (`contact` of `contact.email`). */
const RELATION_RESOURCES: Record<string, string> = {
  contact: 'contacts',
  company: 'companies',
  owner: 'users',
  deal: 'deals',
  product: 'products',
  stage: 'pipelines',
  pipeline: 'pipelines',
};
const MAX_PATHS = 500;

/** Every path a query or aggregation body names: filter keys (through $and, $or, $not), fields, sort, group_by, metrics. */
export function pathsOfQuery(body: unknown): string[] {
  const paths: string[] = [];
  const add = (path: unknown) => typeof path === 'string' && paths.length < MAX_PATHS && paths.push(path);
  const walk = (filter: unknown, depth: number): void => {
    if (depth > 32 || filter === null || typeof filter !== 'object') return;
    if (Array.isArray(filter)) return filter.forEach((f) => walk(f, depth + 1));
    for (const [key, value] of Object.entries(filter)) {
      if (key.startsWith('$')) walk(value, depth + 1);
      else add(key);
    }
  };
  const b = (body ?? {}) as Record<string, unknown>;
  walk(b.filter, 0);
  const each = (items: unknown, pick: (item: unknown) => unknown) => Array.isArray(items) && items.slice(0, MAX_PATHS).forEach((i) => add(pick(i)));
  each(b.fields, (f) => f);
  each(b.sort, (s) => (s as { field?: unknown } | null)?.field);
  each(b.group_by, (g) => (typeof g === 'string' ? g : (g as { field?: unknown } | null)?.field));
  if (b.metrics && typeof b.metrics === 'object') Object.values(b.metrics).forEach((m) => add((m as { field?: unknown } | null)?.field));
  return paths;
}

/** The read permissions a query's paths need beyond its own object's: `deals` filtered on `contact.email` reads contacts. */
export function relationReads(body: unknown): RequiredPermission[] {
  const resources = new Set<string>();
  for (const path of pathsOfQuery(body)) {
    const dot = path.indexOf('.');
    const relation = path.slice(0, Math.max(dot, 0));
    // A client's path: `constructor.x` must not find Object's own properties.
    const resource = dot > 0 && Object.hasOwn(RELATION_RESOURCES, relation) ? RELATION_RESOURCES[relation] : undefined;
    if (resource) resources.add(resource);
  }
  return [...resources].map((resource) => ({ resource, action: 'read' }));
}
