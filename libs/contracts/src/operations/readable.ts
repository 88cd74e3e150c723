import { DomainError, ErrorCode } from '../errors';
import { EVENT_READS } from '../event-catalog';
import { EVENT_TYPES } from '../events';
import { BUILT_IN_ENTRIES, builtInEntry } from '../objects/registry';
import { describePermission, permits, RequiredPermission } from './permissions';

/**
 * What a caller may read, for the routes that reach every object (GET /search, GET /changes, GET /events):
 * the resources its read permissions name (`deals`, `objects`, `objects.invoices`, `imports`), or
 * undefined when it may read everything (`*:read`, `*:*`), so such a caller's reads cost nothing extra.
 * The gateway puts it in the request's context; the owning service narrows its SQL by it.
 */
export function readableResources(permissions: readonly string[]): string[] | undefined {
  if (permits(permissions, '*', 'read')) return undefined;
  const resources = new Set<string>();
  for (const permission of permissions) {
    const colon = permission.indexOf(':');
    const action = permission.slice(colon + 1);
    if (action === 'read' || action === '*') resources.add(permission.slice(0, colon));
  }
  return [...resources].sort();
}

/** Whether a caller with `readable` (undefined: everything) may read `resource`. */
export function mayRead(readable: readonly string[] | undefined, resource: string): boolean {
  return (
    readable === undefined ||
    permits(
      readable.map((r) => `${r}:read`),
      resource,
      'read',
    )
  );
}

/** The resource an object's records are read under: a built-in object's own (stages: pipelines), `objects.<slug>` for a custom one. */
export function objectResource(slug: string): string {
  const entry = builtInEntry(slug);
  return entry ? (entry.permission ?? entry.slug) : `objects.${slug}`;
}

/** The refusal's permission when a caller names an object it may not read (`objects=`, `object=`). */
export function unreadableObject(readable: readonly string[] | undefined, slugs: readonly string[]): RequiredPermission | undefined {
  const slug = slugs.find((s) => !mayRead(readable, objectResource(s)));
  return slug === undefined ? undefined : { resource: objectResource(slug), action: 'read' };
}

/**
 * The objects a narrowed caller may read, as SQL over a column of object slugs takes them: these built-in
 * and custom slugs, and with `customs` every custom object (a slug that is no built-in object's).
 */
export interface ReadableObjects {
  slugs: string[];
  customs: boolean;
}

export const BUILT_IN_SLUGS: readonly string[] = BUILT_IN_ENTRIES.map((e) => e.slug);

export function readableObjects(readable: readonly string[] | undefined): ReadableObjects | undefined {
  if (readable === undefined) return undefined;
  const builtIns = BUILT_IN_SLUGS.filter((slug) => mayRead(readable, objectResource(slug)));
  const customs = readable.includes('objects');
  const named = customs ? [] : readable.filter((r) => r.startsWith('objects.')).map((r) => r.slice('objects.'.length));
  return { slugs: [...builtIns, ...named], customs };
}

/**
 * The events a narrowed caller may see: every type whose EVENT_READS it may read, and custom objects'
 * record events (`object_record.*`) of the `objects` it may read; with `customs`, all of them.
 */
export interface ReadableEvents {
  types: string[];
  objects: string[];
}

export function readableEvents(readable: readonly string[] | undefined): ReadableEvents | undefined {
  const objects = readableObjects(readable);
  if (!objects) return undefined;
  const custom = (resource: string) => resource === 'objects.:object';
  const types = EVENT_TYPES.filter((type) => EVENT_READS[type].every((r) => (custom(r) ? objects.customs : mayRead(readable, r))));
  return { types, objects: objects.customs ? [] : objects.slugs.filter((s) => !builtInEntry(s)) };
}

/**
 * The read permissions events of these types need (all types when `types` is null or undefined): a webhook
 * subscription receives them all, so it needs every one. Record events of custom objects need `objects`.
 */
export function eventTypeReads(types: readonly string[] | null | undefined): RequiredPermission[] {
  const chosen = types ?? EVENT_TYPES;
  const resources = new Set<string>();
  for (const type of chosen) for (const r of EVENT_READS[type as keyof typeof EVENT_READS] ?? []) resources.add(r === 'objects.:object' ? 'objects' : r);
  return [...resources].map((resource) => ({ resource, action: 'read' }));
}

/** The first permission in `needs` that `readable` lacks. */
export function firstUnread(readable: readonly string[] | undefined, needs: readonly RequiredPermission[]): RequiredPermission | undefined {
  return needs.find((p) => !mayRead(readable, p.resource));
}

/** The refusal of a read the caller's permissions do not allow, in the gateway's words (403 naming the permission). */
export function forbiddenRead(missing: RequiredPermission, doing: string): DomainError {
  const needs = describePermission(missing);
  return new DomainError(ErrorCode.Forbidden, `This key lacks the permission ${needs}, which ${doing} needs.`, [
    { field: 'permission', code: 'missing_permission', message: needs },
  ]);
}
