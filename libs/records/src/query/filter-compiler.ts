import { FieldIssue, validationFailed } from '@crm/common';
import { QUERY_OPERATORS, QueryLimits, QueryOperator, RemoteLookup } from '@crm/contracts';
import { operatorsFor, QueryCatalog, QueryField, QueryFieldType, remoteRelationOf, unknownPathMessage } from './query-catalog';

const CAST: Record<QueryFieldType, string> = { string: 'text', enum: 'text', number: 'numeric', boolean: 'boolean', datetime: 'timestamptz', json: 'jsonb' };
/** Most values of an `$in` on a custom field tested one containment each (an OR the GIN index serves as a BitmapOr). */
const CONTAINED_IN_VALUES = 20;
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/i;
const CALENDAR_DATE = /^\d{4}-\d{2}-\d{2}$/;
const isCalendarDate = (value: string) => {
  const date = new Date(`${value}T00:00:00Z`);
  return !Number.isNaN(date.getTime()) && date.toISOString().startsWith(value);
};

/** A condition on a remote relation, waiting for its owner's answer: the ids it answers with are bound to `params[param]`. */
export interface PendingLookup {
  relation: string;
  lookup: RemoteLookup;
  param: number;
}

/**
 * Builds the SQL of one statement over a catalog, binding every value as a parameter and collecting every
 * problem it finds. A caller that adds its own expressions (a sort, a cursor, a GROUP BY) binds them with
 * the same compiler, so all parameters number in one sequence.
 */
export class FilterCompiler {
  readonly params: unknown[] = [];
  readonly issues: FieldIssue[] = [];
  /** The catalog's joins the compiled paths need, by name. */
  readonly joins = new Set<string>();
  /** Conditions on remote relations, each with the parameter its ids are bound to once the owner answers. */
  readonly lookups: PendingLookup[] = [];
  private conditions = 0;

  constructor(private readonly catalog: QueryCatalog) {}

  bind(value: unknown, type: QueryFieldType | 'text[]', array = false): string {
    this.params.push(value);
    const cast = type === 'text[]' ? 'text[]' : `${CAST[type]}${array ? '[]' : ''}`;
    return `$${this.params.length}::${cast}`;
  }

  /**
   * A field's value as a parameter of the column's own type where it can be: integers against an integer
   * column bind as bigint, so the comparison stays on the column and its index; anything else as bind().
   */
  bindFor(field: Pick<QueryField, 'type' | 'integer'>, value: unknown, array = false): string {
    const integral = (v: unknown) => typeof v === 'number' && Number.isSafeInteger(v);
    const asInteger = field.integer && (array ? (value as unknown[]).every(integral) : integral(value) || (typeof value === 'string' && /^-?\d+$/.test(value)));
    if (!asInteger) return this.bind(value, field.type, array);
    this.params.push(value);
    return `$${this.params.length}::bigint${array ? '[]' : ''}`;
  }

  /** A local path's field, its join noted; an issue at `at` when the catalog has no such path (a remote path included: callers test remote() first). */
  field(path: string, at: string): QueryField | undefined {
    const field = this.catalog.fields.get(path);
    if (!field) {
      this.issue(at, 'unknown_field', unknownPathMessage(this.catalog, path));
      return undefined;
    }
    if (field.join) this.joins.add(field.join);
    return field;
  }

  /** The remote relation a path goes through, if it does (`contact` of `contact.email`). */
  remote(path: string): string | undefined {
    return remoteRelationOf(this.catalog, path);
  }

  issue(field: string, code: string, message: string): void {
    this.issues.push({ field, code, message });
  }

  /** The `LEFT JOIN` clauses of the joins the compiled paths need. */
  joinClauses(): string {
    return [...this.joins].map((name) => this.catalog.joins[name].clause).join(' ');
  }

  /** The filter as a boolean SQL expression that is never NULL, so `$not` is its exact complement (see known). */
  filter(node: unknown, at = 'filter', depth = 1): string {
    if (depth > QueryLimits.depth) {
      this.issue(at, 'too_deep', `the filter nests more than ${QueryLimits.depth} levels`);
      return 'TRUE';
    }
    if (!isPlainObject(node)) {
      this.issue(at, 'invalid_value', `${at} must be an object`);
      return 'TRUE';
    }
    const parts: string[] = [];
    // Conditions on one remote relation in one object hold for the same related record, so they go to its service together.
    const remote = new Map<string, Record<string, unknown>>();
    for (const [key, value] of Object.entries(node)) {
      const here = `${at}.${key}`;
      if (key === '$and' || key === '$or') {
        if (!Array.isArray(value) || value.length === 0) {
          this.issue(here, 'invalid_value', `${key} takes a non-empty array of expressions`);
          continue;
        }
        const inner = value.map((item, i) => this.filter(item, `${here}.${i}`, depth + 1));
        parts.push(`(${inner.join(key === '$and' ? ' AND ' : ' OR ')})`);
      } else if (key === '$not') {
        parts.push(`NOT (${this.filter(value, here, depth + 1)})`);
      } else if (key.startsWith('$')) {
        this.issue(here, 'unknown_operator', `'${key}' is not an operator here; use $and, $or, $not, or a field path`);
      } else if (this.remote(key)) {
        const relation = this.remote(key)!;
        remote.set(relation, { ...remote.get(relation), [key]: value });
      } else {
        const field = this.field(key, here);
        if (!field) continue;
        if (isOperatorObject(value)) for (const [op, operand] of Object.entries(value)) parts.push(this.condition(field, op, operand, `${here}.${op}`));
        // A literal is shorthand for $eq, and its problems are named at the field itself.
        else parts.push(this.condition(field, '$eq', value, here));
      }
    }
    for (const [relation, filter] of remote) parts.push(this.remoteCondition(relation, filter, at));
    return parts.length ? parts.join(' AND ') : 'TRUE';
  }

  /**
   * A condition on a remote relation tests this row's reference column against the ids its owner answers
   * with. When the condition also holds for no record at all (`contact.email: null`, `$ne`), the owner
   * answers with the records it does not match and the test is negated, so that rows without a relation,
   * or whose related record was just deleted, are matched exactly as a join would match them.
   */
  private remoteCondition(relation: string, filter: Record<string, unknown>, at: string): string {
    for (const value of Object.values(filter)) {
      const uses = isOperatorObject(value) ? Object.keys(value).length : 1;
      for (let i = 0; i < uses; i++)
        if (++this.conditions === QueryLimits.conditions + 1)
          this.issue(at, 'too_many_conditions', `a filter may have at most ${QueryLimits.conditions} conditions`);
    }
    const negate = Object.values(filter).every(matchesNull);
    this.params.push([]);
    this.lookups.push({ relation, lookup: { at, filter, negate }, param: this.params.length - 1 });
    const column = this.catalog.remotes![relation].column;
    const hit = known(column, `${column} = ANY($${this.params.length}::text[])`);
    return negate ? `(NOT ${hit})` : hit;
  }

  private condition(field: QueryField, op: string, operand: unknown, at: string): string {
    if (!(QUERY_OPERATORS as readonly string[]).includes(op)) {
      this.issue(at, 'unknown_operator', `'${op}' is not an operator; operators are ${QUERY_OPERATORS.join(', ')}`);
      return 'TRUE';
    }
    if (++this.conditions === QueryLimits.conditions + 1)
      this.issue(at, 'too_many_conditions', `a filter may have at most ${QueryLimits.conditions} conditions`);
    const x = field.sql;
    const operator = op as QueryOperator;
    if (field.type === 'json') {
      this.issue(at, 'invalid_operator', `a whole JSON field cannot be compared; filter on one of its values (custom_fields.<name>)`);
      return 'TRUE';
    }
    if (!operatorsFor(field.type).includes(operator)) return this.misfit(at, operator, field);
    switch (operator) {
      case '$exists':
        if (typeof operand !== 'boolean') return this.wrong(at, 'true or false');
        return operand ? `(${x} IS NOT NULL)` : `(${x} IS NULL)`;
      case '$eq':
      case '$ne': {
        if (operand === null) return op === '$eq' ? `(${x} IS NULL)` : `(${x} IS NOT NULL)`;
        const value = this.literal(field, operand, at);
        if (value === undefined) return 'TRUE';
        const p = this.bindFor(field, value);
        if (op === '$ne') return `(${x} IS DISTINCT FROM ${p})`;
        // lower() first, so the index on lower(x) finds the row; the exact test keeps equality case-sensitive.
        if (field.folded) return known(x, `lower(${x}) = lower(${p}) AND ${x} = ${p}`);
        return field.contained ? known(x, `${this.containing(field.contained, [value])} AND ${x} = ${p}`) : known(x, `${x} = ${p}`);
      }
      case '$in':
      case '$nin': {
        if (!Array.isArray(operand)) return this.wrong(at, 'an array of values');
        if (operand.length > QueryLimits.inValues) {
          this.issue(at, 'too_many_values', `${op} takes at most ${QueryLimits.inValues} values`);
          return 'TRUE';
        }
        const values = operand.filter((v) => v !== null).map((v, i) => this.literal(field, v, `${at}.${i}`));
        if (values.some((v) => v === undefined)) return 'TRUE';
        const p = this.bindFor(field, values, true);
        const indexed =
          op !== '$in' || !values.length
            ? undefined
            : field.folded
              ? `lower(${x}) = ANY(${this.bind(
                  (values as string[]).map((v) => v.toLowerCase()),
                  'string',
                  true,
                )})`
              : field.contained && values.length <= CONTAINED_IN_VALUES
                ? this.containing(field.contained, values)
                : undefined;
        const anyOf = known(x, indexed ? `${indexed} AND ${x} = ANY(${p})` : `${x} = ANY(${p})`);
        const matches = operand.includes(null) ? `(${anyOf} OR ${x} IS NULL)` : anyOf;
        return op === '$in' ? matches : `NOT ${matches}`;
      }
      case '$contains':
      case '$starts_with':
      case '$ends_with': {
        if (typeof operand !== 'string') return this.wrong(at, 'a string');
        const escaped = operand.replace(/[\\%_]/g, (c) => `\\${c}`);
        const pattern = op === '$contains' ? `%${escaped}%` : op === '$starts_with' ? `${escaped}%` : `%${escaped}`;
        return known(x, `${x} ILIKE ${this.bind(pattern, 'string')}`);
      }
      default: {
        // Comparisons never match null, as in MongoDB.
        if (operand === null) return this.wrong(at, `a value (${op} never matches null)`);
        const value = this.literal(field, operand, at);
        if (value === undefined) return 'TRUE';
        const sign = { $gt: '>', $gte: '>=', $lt: '<', $lte: '<=' }[op as '$gt'];
        return known(x, `${x} ${sign} ${this.bindFor(field, value)}`);
      }
    }
  }

  /**
   * `column @> {name: v1} OR column @> {name: v2} …`: implied by the typed equality beside it (a JSON number,
   * string or boolean equal to the value), and what a GIN index on the column answers.
   */
  private containing(contained: { column: string; name: string }, values: unknown[]): string {
    const tests = values.map((value) => `${contained.column} @> ${this.bind(JSON.stringify({ [contained.name]: value }), 'json')}`);
    return tests.length === 1 ? tests[0] : `(${tests.join(' OR ')})`;
  }

  private misfit(at: string, op: string, field: QueryField): string {
    this.issue(at, 'invalid_operator', `${op} does not apply to a ${field.type} field`);
    return 'TRUE';
  }

  private wrong(at: string, expected: string): string {
    this.issue(at, 'invalid_value', `${at} must be ${expected}`);
    return 'TRUE';
  }

  /** The value as it is bound, or undefined (with an issue) when it does not fit the field's type. */
  literal(field: QueryField, value: unknown, at: string): unknown {
    switch (field.type) {
      case 'string':
        if (field.calendar && !(typeof value === 'string' && CALENDAR_DATE.test(value) && isCalendarDate(value))) {
          this.issue(at, 'invalid_value', `${at} must be a calendar date YYYY-MM-DD`);
          return undefined;
        }
        if (typeof value === 'string') return value;
        break;
      case 'enum':
        if (typeof value === 'string' && field.values?.includes(value)) return value;
        if (typeof value === 'string') {
          this.issue(at, 'invalid_value', `${at} must be one of ${field.values?.join(', ')}`);
          return undefined;
        }
        break;
      case 'number':
        if (typeof value === 'number' && Number.isFinite(value)) return value;
        break;
      case 'boolean':
        if (typeof value === 'boolean') return value;
        break;
      case 'datetime':
        if (typeof value === 'string' && RFC3339.test(value) && !Number.isNaN(Date.parse(value))) return value;
        this.issue(at, 'invalid_value', `${at} must be an RFC 3339 date-time`);
        return undefined;
    }
    this.issue(at, 'invalid_value', `${at} must be a ${field.type}`);
    return undefined;
  }
}

/**
 * A comparison that is false, not NULL, where the field is null, so that NOT of it is its exact
 * complement. Written as an AND rather than COALESCE so that an index on the field still serves it.
 */
function known(x: string, comparison: string): string {
  return `(${comparison} AND ${x} IS NOT NULL)`;
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** `{$gt: 5}` rather than a literal: a non-empty object whose keys are all operators. */
export function isOperatorObject(value: unknown): value is Record<string, unknown> {
  return isPlainObject(value) && Object.keys(value).length > 0 && Object.keys(value).every((k) => k.startsWith('$'));
}

/** Whether a field's condition holds where the field is null, by the semantics `condition` compiles. */
function matchesNull(value: unknown): boolean {
  const operators = isOperatorObject(value) ? Object.entries(value) : [['$eq', value] as const];
  return operators.every(([op, operand]) => {
    switch (op) {
      case '$eq':
        return operand === null;
      case '$ne':
        return operand !== null;
      case '$in':
        return Array.isArray(operand) && operand.includes(null);
      case '$nin':
        return Array.isArray(operand) && !operand.includes(null);
      case '$exists':
        return operand === false;
      default:
        return false;
    }
  });
}

/** A filter compiled on its own: its WHERE expression, parameters, the joins it needs by name, and its remote conditions in parameter order. */
export interface CompiledFilter {
  where: string;
  params: unknown[];
  joins: string[];
  lookups: Array<{ relation: string } & RemoteLookup>;
}

/**
 * A filter as one SQL boolean expression over the catalog's alias and joins, with its values as
 * parameters (a remote condition's ids left empty, to be bound once its service answers); a
 * `validation_failed` naming every bad path otherwise.
 */
export function compileFilter(catalog: QueryCatalog, filter: unknown): CompiledFilter {
  const q = new FilterCompiler(catalog);
  const where = q.filter(filter);
  if (q.issues.length) throw validationFailed(q.issues);
  return { where, params: q.params, joins: [...q.joins], lookups: q.lookups.map(({ relation, lookup }) => ({ relation, ...lookup })) };
}
