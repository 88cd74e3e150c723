/**
 * Change detection for PATCH paths: a field counts as changed only when its value differs as the API
 * sees it, so re-sending what is stored writes nothing and emits no `*.updated` event.
 */

export type FieldKind = 'value' | 'date' | 'json';

/** How one API field maps onto an entity property. */
export interface FieldSpec<E> {
  api: string;
  prop: keyof E & string;
  kind: FieldKind;
}

/** `iconUrl` -> `icon_url`: how an entity property is named in the API. */
type Snake<S extends string> = S extends `${infer Head}${infer Tail}` ? `${Head extends Lowercase<Head> ? Head : `_${Lowercase<Head>}`}${Snake<Tail>}` : S;
type ApiNameOf<E> = { [K in keyof E & string]: Snake<K> }[keyof E & string];

/**
 * The field specs of a PATCH path, written as `{api_name: kind}` in the order changes are reported: each
 * API field maps onto the entity property of the same name in camel case (`icp_score` -> `icpScore`).
 */
export function fieldSpecs<E>(kinds: Partial<Record<ApiNameOf<E>, FieldKind>>): FieldSpec<E>[] {
  return Object.entries(kinds as Record<string, FieldKind>).map(([api, kind]) => ({
    api,
    prop: api.replace(/_([a-z0-9])/g, (_, letter: string) => letter.toUpperCase()) as keyof E & string,
    kind,
  }));
}

/** The change record of an update: which API fields changed, with their values before and after. */
export interface ChangeSet {
  changed: string[];
  previous: Record<string, unknown>;
  current: Record<string, unknown>;
}

/**
 * JSON with object keys sorted and undefined members left out, so jsonb's own key order (or a client's)
 * never looks like a change. Array order is kept: it is part of the value.
 */
export function canonicalJson(value: unknown): string {
  if (value === undefined) return 'null';
  if (value instanceof Date) return JSON.stringify(value.toISOString());
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const record = value as Record<string, unknown>;
    const entries = Object.keys(record)
      .filter((k) => record[k] !== undefined)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson(record[k])}`);
    return `{${entries.join(',')}}`;
  }
  if (typeof value === 'bigint') return value.toString();
  return JSON.stringify(value);
}

function instant(value: unknown): number | null {
  if (value === undefined || value === null) return null;
  if (value instanceof Date) return value.getTime();
  if (typeof value === 'string' || typeof value === 'number') return new Date(value).getTime();
  return Number.NaN;
}

function numeric(value: unknown): number | undefined {
  if (typeof value === 'number') return value;
  if (typeof value === 'bigint') return Number(value);
  if (typeof value === 'string' && value.trim() !== '' && Number.isFinite(Number(value))) return Number(value);
  return undefined;
}

/**
 * Whether two values of one field are the same as the API sees them: null and absent alike; a Date by
 * its instant (also against an ISO string); a number against a numeric string (PostgreSQL returns
 * bigint and numeric as strings) by value; objects and arrays by canonical JSON, whatever the key order.
 */
export function sameValue(a: unknown, b: unknown): boolean {
  if (a instanceof Date || b instanceof Date) return instant(a) === instant(b);
  const x = a ?? null;
  const y = b ?? null;
  if (x === y) return true;
  if (x === null || y === null) return false;
  if (typeof x === 'object' || typeof y === 'object') return canonicalJson(x) === canonicalJson(y);
  const isNumber = (v: unknown) => typeof v === 'number' || typeof v === 'bigint';
  if (isNumber(x) || isNumber(y)) return numeric(x) !== undefined && numeric(x) === numeric(y);
  return false;
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
  if (kind === 'json') return sameValue(a ?? {}, b ?? {});
  return sameValue(a, b);
}

/**
 * Compares the fields present in `input` (PATCH semantics: absent means unchanged, null clears) with the
 * entity and returns the properties to write plus the change record for the `*.updated` event. An empty
 * `changed` means the PATCH changes nothing: write nothing, emit nothing.
 */
export function diffFields<E>(entity: E, input: object, specs: readonly FieldSpec<E>[]): { set: Partial<E>; changes: ChangeSet } {
  const sent = input as Record<string, unknown>;
  const set: Partial<E> = {};
  const changes: ChangeSet = { changed: [], previous: {}, current: {} };
  for (const spec of specs) {
    if (sent[spec.api] === undefined) continue;
    const next = toStored(spec.kind, sent[spec.api]);
    const before = entity[spec.prop];
    if (same(spec.kind, before, next)) continue;
    (set as Record<string, unknown>)[spec.prop] = next;
    changes.changed.push(spec.api);
    changes.previous[spec.api] = toApi(spec.kind, before);
    changes.current[spec.api] = toApi(spec.kind, next);
  }
  return { set, changes };
}

/** What changed between two views of a record among `fields`, in their order, with the views' values. */
export function viewChanges<V extends object>(was: V, now: V, fields: ReadonlyArray<keyof V & string>): ChangeSet {
  const changes: ChangeSet = { changed: [], previous: {}, current: {} };
  for (const field of fields) {
    if (sameValue(was[field], now[field])) continue;
    changes.changed.push(field);
    changes.previous[field] = was[field];
    changes.current[field] = now[field];
  }
  return changes;
}
