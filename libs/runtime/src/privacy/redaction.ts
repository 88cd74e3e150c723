/**
 * How personal values leave a stored value (docs/privacy.md, "Rules"). Two rules:
 * - a value *about* the erased contact (its own change entries and events) is blanked: every value is
 *   replaced by null except identifiers (`id`, `*_id`, `*_ids`), the list of changed fields and types, and
 *   it is marked `"redacted": true`, so it keeps its place, id and type;
 * - a value of another record that names the person (an activity's text, a deal's note) keeps its own
 *   content with each of the person's values (email, phone, name, surname) replaced by `[redacted]`.
 */
export const REDACTED_TEXT = '[redacted]';

const KEPT_KEY = /^(id|type|changed|object|action|[a-z0-9_]*_ids?)$/;

function escapeRegExp(value: string): string {
  return value.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** The person's values, longest first (a full name before the surname it contains), as one pattern. */
export function needlePattern(needles: readonly string[]): RegExp | undefined {
  const usable = [...new Set(needles.filter((n) => n && n.trim().length >= 2))].sort((a, b) => b.length - a.length);
  return usable.length ? new RegExp(usable.map(escapeRegExp).join('|'), 'gi') : undefined;
}

export function scrubText(text: string, pattern: RegExp | undefined): string {
  return pattern ? text.replace(pattern, REDACTED_TEXT) : text;
}

/** Another record's value: each string keeps its text without the person's values. */
export function scrubJson(value: unknown, pattern: RegExp | undefined): unknown {
  if (typeof value === 'string') return scrubText(value, pattern);
  if (Array.isArray(value)) return value.map((v) => scrubJson(v, pattern));
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [scrubText(k, pattern), scrubJson(v, pattern)]));
  }
  return value;
}

function blankInner(value: unknown, key: string): unknown {
  if (KEPT_KEY.test(key) && (typeof value === 'string' || Array.isArray(value))) return value;
  if (Array.isArray(value)) return value.map((v) => blankInner(v, ''));
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, blankInner(v, k)]));
  return value === undefined ? undefined : null;
}

/** A value about the erased person: identifiers and field names stay, every value is null, marked redacted. */
export function blankJson(value: unknown): Record<string, unknown> {
  const inner = value && typeof value === 'object' && !Array.isArray(value) ? (blankInner(value, '') as Record<string, unknown>) : {};
  return { ...inner, redacted: true };
}

/** ILIKE patterns finding a row whose text holds any of the person's values. */
export function likePatterns(needles: readonly string[]): string[] {
  return [...new Set(needles.filter((n) => n && n.trim().length >= 2))].map((n) => `%${n.replace(/[\\%_]/g, (c) => `\\${c}`)}%`);
}
