import { FieldIssue, QUERY_OPERATORS, QueryLimits, QueryOperator } from '@crm/contracts';
import { validationFailed } from './validation';

/**
 * Filters over events (docs/events.md, docs/webhooks.md): the language of `POST /<object>/query` (`$and`,
 * `$or`, `$not`, the same operators and MongoDB's null semantics) over an event as subscribers receive it.
 * This is the one evaluator: webhook delivery and the event log both test events with it, so a filter
 * means the same in both places.
 */

/** A value's type as a filter checks operators and literals against it; `any` where the payload does not say (custom fields). */
export type EventFieldType = 'string' | 'enum' | 'number' | 'boolean' | 'datetime' | 'any';

export interface EventFieldInfo {
  type: EventFieldType;
  values?: readonly string[];
}

/** What a path of a filter refers to: its types where it exists (several when event types disagree), or undefined when it names nothing. */
export type EventPathResolver = (path: string) => EventFieldInfo[] | undefined | string;

export type EventPredicate = (event: object) => boolean;

const TEXT_OPERATORS = new Set<string>(['$contains', '$starts_with', '$ends_with']);
const ORDER_OPERATORS = new Set<string>(['$gt', '$gte', '$lt', '$lte']);
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/i;

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** `{$gt: 5}` rather than a literal: a non-empty object whose keys are all operators. */
function isOperatorObject(value: unknown): value is Record<string, unknown> {
  return isPlainObject(value) && Object.keys(value).length > 0 && Object.keys(value).every((k) => k.startsWith('$'));
}

function fits(type: EventFieldType, op: string): boolean {
  if (type === 'any') return true;
  if (TEXT_OPERATORS.has(op)) return type === 'string';
  if (ORDER_OPERATORS.has(op)) return type !== 'boolean';
  return true;
}

/** Whether a literal suits a type; a message saying what it must be otherwise. */
function literalProblem(info: EventFieldInfo, value: unknown): string | undefined {
  switch (info.type) {
    case 'any':
      return ['string', 'number', 'boolean'].includes(typeof value) ? undefined : 'a string, number or boolean';
    case 'enum':
      return typeof value === 'string' && info.values?.includes(value) ? undefined : `one of ${info.values?.join(', ')}`;
    case 'number':
      return typeof value === 'number' && Number.isFinite(value) ? undefined : 'a number';
    case 'boolean':
      return typeof value === 'boolean' ? undefined : 'a boolean';
    case 'datetime':
      return typeof value === 'string' && RFC3339.test(value) && !Number.isNaN(Date.parse(value)) ? undefined : 'an RFC 3339 date-time';
    default:
      return typeof value === 'string' ? undefined : 'a string';
  }
}

/**
 * What one filter may weigh beyond a query's limits (docs/events.md, docs/webhooks.md): every event the log
 * scans or a subscription screens is tested with it, so its size is bounded as well as its conditions.
 */
export const EventFilterLimits = {
  /** The filter as JSON, in bytes (UTF-8). */
  bytes: 8192,
  /** One `$contains`, `$starts_with` or `$ends_with` operand, in characters. */
  needle: 256,
} as const;

/**
 * Checks a filter's shape, limits, paths, operators and literals; every problem, each named by where it is
 * (`filter.$or.1.data.x`). `sized: false` leaves out EventFilterLimits, for a filter stored before they
 * applied and checked again unchanged (a webhook PATCH of its event types alone).
 */
export function eventFilterIssues(filter: unknown, resolve: EventPathResolver, at = 'filter', { sized = true }: { sized?: boolean } = {}): FieldIssue[] {
  const issues: FieldIssue[] = [];
  let conditions = 0;
  const issue = (field: string, code: string, message: string) => issues.push({ field, code, message });
  const bytes = sized ? Buffer.byteLength(JSON.stringify(filter) ?? '') : 0;
  if (bytes > EventFilterLimits.bytes) issue(at, 'too_large', `a filter is at most ${EventFilterLimits.bytes} bytes as JSON; this one is ${bytes}`);

  const condition = (path: string, infos: EventFieldInfo[], op: string, operand: unknown, where: string) => {
    if (!(QUERY_OPERATORS as readonly string[]).includes(op)) {
      return issue(where, 'unknown_operator', `'${op}' is not an operator; operators are ${QUERY_OPERATORS.join(', ')}`);
    }
    if (++conditions === QueryLimits.conditions + 1) issue(where, 'too_many_conditions', `a filter may have at most ${QueryLimits.conditions} conditions`);
    const fitting = infos.filter((i) => fits(i.type, op));
    if (!fitting.length) return issue(where, 'invalid_operator', `${op} does not apply to ${path}, a ${infos.map((i) => i.type).join(' or ')} value`);
    const check = (value: unknown, place: string) => {
      const problems = fitting.map((i) => literalProblem(i, value));
      if (problems.every((p) => p !== undefined)) issue(place, 'invalid_value', `${place} must be ${problems.join(' or ')}`);
    };
    switch (op as QueryOperator) {
      case '$exists':
        if (typeof operand !== 'boolean') issue(where, 'invalid_value', `${where} must be true or false`);
        return;
      case '$eq':
      case '$ne':
        if (operand !== null) check(operand, where);
        return;
      case '$in':
      case '$nin':
        if (!Array.isArray(operand)) return issue(where, 'invalid_value', `${where} must be an array of values`);
        if (operand.length > QueryLimits.inValues) return issue(where, 'too_many_values', `${op} takes at most ${QueryLimits.inValues} values`);
        operand.forEach((v, i) => v !== null && check(v, `${where}.${i}`));
        return;
      case '$contains':
      case '$starts_with':
      case '$ends_with':
        if (typeof operand !== 'string') issue(where, 'invalid_value', `${where} must be a string`);
        else if (sized && operand.length > EventFilterLimits.needle) {
          issue(where, 'too_long', `${op} takes a string of at most ${EventFilterLimits.needle} characters; this one has ${operand.length}`);
        }
        return;
      default:
        if (operand === null) return issue(where, 'invalid_value', `${where} must be a value (${op} never matches null)`);
        check(operand, where);
    }
  };

  const walk = (node: unknown, here: string, depth: number) => {
    if (depth > QueryLimits.depth) return issue(here, 'too_deep', `the filter nests more than ${QueryLimits.depth} levels`);
    if (!isPlainObject(node)) return issue(here, 'invalid_value', `${here} must be an object`);
    for (const [key, value] of Object.entries(node)) {
      const where = `${here}.${key}`;
      if (key === '$and' || key === '$or') {
        if (!Array.isArray(value) || value.length === 0) issue(where, 'invalid_value', `${key} takes a non-empty array of expressions`);
        else value.forEach((item, i) => walk(item, `${where}.${i}`, depth + 1));
      } else if (key === '$not') {
        walk(value, where, depth + 1);
      } else if (key.startsWith('$')) {
        issue(where, 'unknown_operator', `'${key}' is not an operator here; use $and, $or, $not, or a field path`);
      } else if (key.length > QueryLimits.path) {
        issue(where, 'invalid_value', `a path is at most ${QueryLimits.path} characters`);
      } else {
        const infos = resolve(key);
        if (infos === undefined || typeof infos === 'string') {
          issue(where, 'unknown_field', typeof infos === 'string' ? infos : `'${key}' is not a path of these events`);
          continue;
        }
        if (isOperatorObject(value)) for (const [op, operand] of Object.entries(value)) condition(key, infos, op, operand, `${where}.${op}`);
        else condition(key, infos, '$eq', value, where);
      }
    }
  };
  walk(filter, at, 1);
  return issues;
}

/** The values a path reaches: through arrays along the way, as MongoDB does; an array at the end stands for its elements. */
function valuesAt(event: unknown, steps: string[]): unknown[] {
  let current: unknown[] = [event];
  for (const step of steps) {
    const next: unknown[] = [];
    for (const value of current) {
      if (Array.isArray(value)) {
        for (const item of value) if (isPlainObject(item) && step in item) next.push(item[step]);
      } else if (isPlainObject(value) && step in value) next.push(value[step]);
    }
    current = next;
  }
  return current.flatMap((v) => (Array.isArray(v) ? v : [v]));
}

/** Orders two values of one kind (date-times by instant); undefined when they cannot be compared, as comparisons never match across types. */
function compare(a: unknown, b: unknown): number | undefined {
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  if (typeof a !== 'string' || typeof b !== 'string') return undefined;
  if (RFC3339.test(a) && RFC3339.test(b)) return Date.parse(a) - Date.parse(b);
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Whether the values a path reaches hold no value: missing, null, or an empty array, which only null-seeking conditions match. */
const holdsNull = (values: unknown[]) => values.length === 0 || values.some((v) => v === null || v === undefined);
const present = (v: unknown) => v !== null && v !== undefined;

/**
 * One condition as a test of the values its path reaches, with everything about its operand worked out once
 * here rather than for every event: a needle is lower-cased once, an `$in` list becomes a Set.
 */
function compileCondition(op: string, operand: unknown): (values: unknown[]) => boolean {
  switch (op) {
    case '$eq':
      return operand === null ? holdsNull : (values) => values.some((v) => v === operand);
    case '$ne': {
      const eq = compileCondition('$eq', operand);
      return (values) => !eq(values);
    }
    case '$in':
    case '$nin': {
      const list = new Set(operand as unknown[]);
      const seeksNull = list.has(null);
      const within = (values: unknown[]) => (seeksNull && holdsNull(values)) || values.some((v) => present(v) && list.has(v));
      return op === '$in' ? within : (values) => !within(values);
    }
    case '$exists':
      return operand === true ? (values) => values.some(present) : (values) => !values.some(present);
    case '$contains':
    case '$starts_with':
    case '$ends_with': {
      const needle = (operand as string).toLowerCase();
      const found =
        op === '$contains'
          ? (hay: string) => hay.includes(needle)
          : op === '$starts_with'
            ? (hay: string) => hay.startsWith(needle)
            : (hay: string) => hay.endsWith(needle);
      return (values) => values.some((v) => typeof v === 'string' && found(v.toLowerCase()));
    }
    default: {
      const holds = op === '$gt' ? (c: number) => c > 0 : op === '$gte' ? (c: number) => c >= 0 : op === '$lt' ? (c: number) => c < 0 : (c: number) => c <= 0;
      return (values) =>
        values.some((v) => {
          if (!present(v)) return false;
          const c = compare(v, operand);
          return c !== undefined && holds(c);
        });
    }
  }
}

/** A checked filter as a predicate over events; the filter must have passed eventFilterIssues (or come from storage, which only keeps checked ones). */
export function compileEventFilter(filter: Record<string, unknown>): EventPredicate {
  const parts: EventPredicate[] = [];
  for (const [key, value] of Object.entries(filter)) {
    if (key === '$and' || key === '$or') {
      const inner = (value as Record<string, unknown>[]).map(compileEventFilter);
      parts.push(key === '$and' ? (e) => inner.every((p) => p(e)) : (e) => inner.some((p) => p(e)));
    } else if (key === '$not') {
      const inner = compileEventFilter(value as Record<string, unknown>);
      parts.push((e) => !inner(e));
    } else {
      const steps = key.split('.');
      const ops = isOperatorObject(value) ? Object.entries(value) : [['$eq', value] as const];
      for (const [op, operand] of ops) {
        const holds = compileCondition(op, operand);
        parts.push((e) => holds(valuesAt(e, steps)));
      }
    }
  }
  return (e) => parts.every((p) => p(e));
}

/** The conditions of a checked filter: what testing one event with it costs, in the units the event log's scan budget counts (docs/events.md). */
export function eventFilterCost(filter: unknown): number {
  if (!isPlainObject(filter)) return 0;
  let cost = 0;
  for (const [key, value] of Object.entries(filter)) {
    if (key === '$and' || key === '$or') cost += Array.isArray(value) ? value.reduce((sum: number, f) => sum + eventFilterCost(f), 0) : 0;
    else if (key === '$not') cost += eventFilterCost(value);
    else cost += isOperatorObject(value) ? Object.keys(value).length : 1;
  }
  return cost;
}

/** Checks a filter and compiles it, or throws one validation_failed naming every problem. */
export function checkedEventFilter(filter: unknown, resolve: EventPathResolver, at = 'filter'): EventPredicate {
  const issues = eventFilterIssues(filter, resolve, at);
  if (issues.length) throw validationFailed(issues);
  return compileEventFilter(filter as Record<string, unknown>);
}
