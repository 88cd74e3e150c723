import { ChangeSet, sameValue } from '@crm/common';
import { ChangeAction } from '@crm/contracts';

/** A change entry before the outbox stamps it with its id, instant and origin. */
export interface ChangeDraft {
  object: string;
  record_id: string;
  action: ChangeAction;
  changed: string[];
  previous: Record<string, unknown> | null;
  current: Record<string, unknown> | null;
}

/** Fields whose values are maps of custom values; history names each custom value by its own path. */
const CUSTOM_VALUE_MAPS = new Set(['custom_fields', 'values']);
/** Kept by the system on every write (a history listing them would only repeat `occurred_at`), or derived from other fields. */
const BOOKKEEPING = new Set(['id', 'object', 'created_at', 'updated_at', 'relationships']);

function isMap(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value) && !(value instanceof Date);
}

function isEmpty(value: unknown): boolean {
  return (
    value === null || value === undefined || value === '' || (isMap(value) && Object.keys(value).length === 0) || (Array.isArray(value) && value.length === 0)
  );
}

/** The fields of a record that hold a value, as paths: what a creation set, or what a deletion removed. */
export function setFields(view: object): Record<string, unknown> {
  const fields: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(view)) {
    if (BOOKKEEPING.has(name) || isEmpty(value)) continue;
    if (CUSTOM_VALUE_MAPS.has(name) && isMap(value)) {
      for (const [key, inner] of Object.entries(value)) if (!isEmpty(inner)) fields[`${name}.${key}`] = inner;
    } else {
      fields[name] = value instanceof Date ? value.toISOString() : value;
    }
  }
  return fields;
}

export function createdChange(object: string, recordId: string, view: object): ChangeDraft {
  const current = setFields(view);
  return { object, record_id: recordId, action: 'created', changed: Object.keys(current), previous: null, current };
}

export function deletedChange(object: string, recordId: string, view: object): ChangeDraft {
  const previous = setFields(view);
  return { object, record_id: recordId, action: 'deleted', changed: Object.keys(previous), previous, current: null };
}

/**
 * An update's entry from the change set its event carries, with each changed custom value as its own path
 * (`custom_fields.tier`); null when nothing really changed, so a no-op records nothing.
 */
export function updatedChange(object: string, recordId: string, changes: ChangeSet, action: ChangeAction = 'updated'): ChangeDraft | null {
  const entry: ChangeDraft = { object, record_id: recordId, action, changed: [], previous: {}, current: {} };
  for (const path of changes.changed) {
    const before = changes.previous[path];
    const after = changes.current[path];
    if (CUSTOM_VALUE_MAPS.has(path) && (isMap(before) || isMap(after))) {
      const was = isMap(before) ? before : {};
      const now = isMap(after) ? after : {};
      for (const key of [...new Set([...Object.keys(was), ...Object.keys(now)])].sort()) {
        if (sameValue(was[key], now[key])) continue;
        entry.changed.push(`${path}.${key}`);
        entry.previous![`${path}.${key}`] = was[key] ?? null;
        entry.current![`${path}.${key}`] = now[key] ?? null;
      }
      continue;
    }
    if (sameValue(before, after)) continue;
    entry.changed.push(path);
    entry.previous![path] = before ?? null;
    entry.current![path] = after ?? null;
  }
  return entry.changed.length ? entry : null;
}

/** The winner's entry of a merge: `merged_from` names the loser, beside every field the merge filled. */
export function mergedChange(object: string, winnerId: string, loserId: string, changes: ChangeSet): ChangeDraft {
  const filled = updatedChange(object, winnerId, changes);
  return {
    object,
    record_id: winnerId,
    action: 'merged',
    changed: ['merged_from', ...(filled?.changed ?? [])],
    previous: { merged_from: null, ...(filled?.previous ?? {}) },
    current: { merged_from: loserId, ...(filled?.current ?? {}) },
  };
}

/** The loser's entry of a merge: its deletion, naming the record it went into. */
export function mergedAwayChange(object: string, loserId: string, winnerId: string, view: object): ChangeDraft {
  const deleted = deletedChange(object, loserId, view);
  return { ...deleted, changed: [...deleted.changed, 'merged_into'], previous: { ...deleted.previous, merged_into: null }, current: { merged_into: winnerId } };
}
