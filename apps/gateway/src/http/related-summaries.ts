import { BUILT_IN_ENTRIES, permits } from '@crm/contracts';

/** A summary's `type` is its object's singular noun (`contact`); the permission resource of that object's records. */
const SUMMARY_RESOURCES: ReadonlyMap<string, string> = new Map(BUILT_IN_ENTRIES.map((entry) => [entry.one, entry.permission ?? entry.slug]));
const SUMMARY_KEYS = new Set(['type', 'id', 'name']);
const MAX_DEPTH = 64;

/** Principals' permission sets are kept per key, so the answer is worked out once per key, not per request. */
const hiddenByPermissions = new WeakMap<readonly string[], ReadonlySet<string> | null>();

/**
 * The summary types (`contact`, `user`) whose records the caller may not read, or null when it may read
 * them all, as every key with `*:read` may: then an answer is passed on untouched and unparsed.
 */
export function hiddenSummaryTypes(permissions: readonly string[]): ReadonlySet<string> | null {
  let hidden = hiddenByPermissions.get(permissions);
  if (hidden === undefined) {
    const types = [...SUMMARY_RESOURCES].filter(([, resource]) => !permits(permissions, resource, 'read')).map(([type]) => type);
    hidden = types.length ? new Set(types) : null;
    hiddenByPermissions.set(permissions, hidden);
  }
  return hidden;
}

/**
 * Removes the `name` of every related summary (`{type, id, name}` in `relationships`, `included`, an
 * association's item) whose record the caller may not read: it still learns that a deal has a contact and
 * which id, as the deal's own `contact_id` says, never who the contact is. Changes `value` in place.
 */
export function redactSummaries<T>(value: T, hidden: ReadonlySet<string>): T {
  const walk = (node: unknown, depth: number): void => {
    if (node === null || typeof node !== 'object' || depth > MAX_DEPTH) return;
    if (Array.isArray(node)) {
      for (const item of node) walk(item, depth + 1);
      return;
    }
    const record = node as Record<string, unknown>;
    if (isSummary(record) && hidden.has(record.type as string)) {
      delete record.name;
      return;
    }
    for (const key in record) walk(record[key], depth + 1);
  };
  walk(value, 0);
  return value;
}

function isSummary(record: Record<string, unknown>): boolean {
  if (typeof record.type !== 'string' || typeof record.id !== 'string' || !('name' in record)) return false;
  for (const key in record) if (!SUMMARY_KEYS.has(key)) return false;
  return true;
}
