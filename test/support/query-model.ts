/**
 * MongoDB's reading of a query filter, evaluated in the test over records the test made: the reference
 * that POST /<object>/query answers are checked against (docs/query.md).
 */
export type Value = string | number | boolean | null;
export type Expr = { [key: string]: unknown };
export type Row = { id: string } & Record<string, Value>;
/** How values of a path compare: datetimes as instants, the rest as they are. */
export type Kind = 'number' | 'datetime' | 'string' | 'enum' | 'id' | 'boolean';

export const isOperators = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** Datetimes compare as instants, whatever offset or precision they are written with. */
export function normalise(kind: Kind, value: unknown): Value {
  if (value === null || value === undefined) return null;
  if (kind === 'datetime') return Date.parse(value as string);
  return value as Value;
}

export function operatorHolds(kind: Kind, raw: Value, op: string, arg: unknown): boolean {
  const value = normalise(kind, raw);
  const literal = (x: unknown) => normalise(kind, x);
  const lower = (x: unknown) => String(x).toLowerCase();
  switch (op) {
    case '$eq':
      return value === literal(arg);
    case '$ne':
      return value !== literal(arg);
    case '$gt':
      return value !== null && (value as number) > (literal(arg) as number);
    case '$gte':
      return value !== null && (value as number) >= (literal(arg) as number);
    case '$lt':
      return value !== null && (value as number) < (literal(arg) as number);
    case '$lte':
      return value !== null && (value as number) <= (literal(arg) as number);
    case '$in':
      return (arg as unknown[]).some((x) => value === literal(x));
    case '$nin':
      return !(arg as unknown[]).some((x) => value === literal(x));
    case '$contains':
      return value !== null && lower(value).includes(lower(arg));
    case '$starts_with':
      return value !== null && lower(value).startsWith(lower(arg));
    case '$ends_with':
      return value !== null && lower(value).endsWith(lower(arg));
    case '$exists':
      return arg ? value !== null : value === null;
    default:
      throw new Error(`the model has no operator ${op}`);
  }
}

/** The filter as MongoDB reads it: missing and null are one, and $not is the complement, nulls included. */
export function holds(row: Row, expr: Expr, kindOf: (path: string) => Kind): boolean {
  return Object.entries(expr).every(([key, value]) => {
    if (key === '$and') return (value as Expr[]).every((e) => holds(row, e, kindOf));
    if (key === '$or') return (value as Expr[]).some((e) => holds(row, e, kindOf));
    if (key === '$not') return !holds(row, value as Expr, kindOf);
    const ops = isOperators(value) ? value : { $eq: value };
    return Object.entries(ops).every(([op, arg]) => operatorHolds(kindOf(key), row[key] ?? null, op, arg));
  });
}
