import { FieldIssue } from '@crm/common';
import { INHERITED_NAMES } from '@crm/contracts';

/**
 * Limits on the shape of any JSON body or query a client sends, checked at the gateway before anything
 * else reads it. They sit well above every field's own limit (the owning service checks those), and
 * exist so no input can exhaust a stack, a loop or a log line: a deeply nested body, a huge array, a
 * string with a NUL byte PostgreSQL cannot store, or a key named like a member every object inherits
 * (`__proto__`, `constructor`, `toString`, …) or `prototype`.
 */
export const InputLimits = {
  depth: 32,
  arrayItems: 1000,
  objectKeys: 1000,
  stringLength: 100_000,
} as const;

/** NUL, and UTF-16 surrogates that are not part of a pair. */
const UNSTORABLE = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const MAX_ISSUES = 20;

function join(path: string, key: string | number): string {
  return typeof key === 'number' ? `${path}[${key}]` : path ? `${path}.${key}` : key;
}

/** Walks the value iteratively (no recursion, whatever the nesting); at most 20 problems, each naming the field and the limit. */
export function inputProblems(value: unknown): FieldIssue[] {
  const issues: FieldIssue[] = [];
  const stack: Array<{ value: unknown; path: string; depth: number }> = [{ value, path: '', depth: 0 }];
  const field = (path: string) => path || '(body)';
  while (stack.length && issues.length < MAX_ISSUES) {
    const { value: current, path, depth } = stack.pop()!;
    if (typeof current === 'string') {
      if (current.length > InputLimits.stringLength) {
        issues.push({ field: field(path), code: 'too_long', message: `${field(path)} is longer than ${InputLimits.stringLength} characters` });
      } else if (UNSTORABLE.test(current)) {
        issues.push({ field: field(path), code: 'invalid_characters', message: `${field(path)} contains a NUL character or an unpaired UTF-16 surrogate` });
      }
      continue;
    }
    if (current === null || typeof current !== 'object') continue;
    if (depth >= InputLimits.depth) {
      issues.push({ field: field(path), code: 'too_deep', message: `${field(path)} is nested deeper than ${InputLimits.depth} levels` });
      continue;
    }
    if (Array.isArray(current)) {
      if (current.length > InputLimits.arrayItems) {
        issues.push({ field: field(path), code: 'too_many_items', message: `${field(path)} has more than ${InputLimits.arrayItems} items` });
        continue;
      }
      for (let i = current.length - 1; i >= 0; i--) stack.push({ value: current[i], path: join(path, i), depth: depth + 1 });
      continue;
    }
    const keys = Object.keys(current);
    if (keys.length > InputLimits.objectKeys) {
      issues.push({ field: field(path), code: 'too_many_keys', message: `${field(path)} has more than ${InputLimits.objectKeys} keys` });
      continue;
    }
    for (let i = keys.length - 1; i >= 0; i--) {
      const key = keys[i];
      const at = join(path, key);
      // The services' validation would silently drop such a key (or trip over it) rather than name it.
      if (INHERITED_NAMES.has(key)) {
        issues.push({ field: at, code: 'unknown_field', message: `unknown field '${key}'` });
        continue;
      }
      if (UNSTORABLE.test(key) || key.length > InputLimits.stringLength) {
        issues.push({
          field: at,
          code: 'invalid_characters',
          message: `the key of ${at} contains a NUL character or an unpaired UTF-16 surrogate, or is too long`,
        });
        continue;
      }
      stack.push({ value: (current as Record<string, unknown>)[key], path: at, depth: depth + 1 });
    }
  }
  return issues;
}
