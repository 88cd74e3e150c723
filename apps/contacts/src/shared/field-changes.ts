import type { FieldChanges } from '@crm/contracts';

export type FieldKind = 'value' | 'date' | 'json';

/** How one API field maps onto an entity property. */
export interface FieldSpec<E> {
  api: string;
  prop: keyof E & string;
  kind: FieldKind;
}

/** JSON with object keys sorted, so jsonb's own key order never looks like a change. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.keys(value as Record<string, unknown>)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value);
}

function toStored(kind: FieldKind, value: unknown): unknown {
  if (kind === 'date') return value === null || value === undefined ? null : new Date(value as string);
  if (kind === 'json') return value === null || value === undefined ? {} : value;
  return value;
}

/** The API form of a stored value, as clients and event consumers see it. */
export function toApi(kind: FieldKind, value: unknown): unknown {
  if (kind === 'date') return value instanceof Date ? value.toISOString() : (value ?? null);
  return value ?? (kind === 'json' ? {} : null);
}

function same(kind: FieldKind, a: unknown, b: unknown): boolean {
  if (kind === 'date') return (a instanceof Date ? a.getTime() : a) === (b instanceof Date ? b.getTime() : b);
  if (kind === 'json') return canonicalJson(a ?? {}) === canonicalJson(b ?? {});
  return a === b;
}

/**
 * Compares the fields present in `input` (PATCH semantics: absent means unchanged, null clears) with the
 * entity and returns the properties to write plus the change record for the `*.updated` event.
 */
export function diffFields<E>(entity: E, input: Record<string, unknown>, specs: FieldSpec<E>[]): { set: Partial<E>; changes: FieldChanges } {
  const set: Partial<E> = {};
  const changes: FieldChanges = { changed: [], previous: {}, current: {} };
  for (const spec of specs) {
    if (input[spec.api] === undefined) continue;
    const next = toStored(spec.kind, input[spec.api]);
    const before = entity[spec.prop];
    if (same(spec.kind, before, next)) continue;
    (set as Record<string, unknown>)[spec.prop] = next;
    changes.changed.push(spec.api);
    changes.previous[spec.api] = toApi(spec.kind, before);
    changes.current[spec.api] = toApi(spec.kind, next);
  }
  return { set, changes };
}

/** `2030-01-01T00:00:00.000Z`, or null. */
export function iso(value: Date | null): string | null {
  return value ? value.toISOString() : null;
}

/** Escapes LIKE wildcards so a search term matches literally. */
export function likePattern(term: string): string {
  return `%${term.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}
