/**
 * A SQL condition every event a filter holds for passes, so PostgreSQL can drop most of a filtered page's
 * window before the rows travel and are parsed; the shared evaluator still decides on what is left. It must
 * never drop a matching event, so it is derived only from what is certain: the filter's top-level conjunction
 * (its keys and `$and`), and of that only equalities and `$in` with string or boolean literals (no null, which
 * matches a missing path; no numbers, whose JSON text PostgreSQL keeps exactly where JavaScript rounds).
 * Everything else (`$or`, `$not`, `$ne`, `$nin`, ranges, text operators, `$exists`) is left to the evaluator.
 *
 * `type`, `via` and `request_id` are columns. `actor.<path>` and `data.<path>` are tested with a lax jsonpath,
 * which, like the evaluator (MongoDB's rule), reaches through arrays of objects along the way and compares
 * with each element of an array at the end; where it is looser (arrays of arrays) it only keeps more rows.
 */
export type Placeholder = (value: unknown) => string;

const COLUMNS = new Set(['type', 'via', 'request_id']);
const DOCUMENTS = new Set(['actor', 'data']);

type Literal = string | boolean;

const isLiteral = (v: unknown): v is Literal => typeof v === 'string' || typeof v === 'boolean';
const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isOperatorObject = (v: unknown): v is Record<string, unknown> =>
  isPlainObject(v) && Object.keys(v).length > 0 && Object.keys(v).every((k) => k.startsWith('$'));

/** The values one condition allows, when it is an equality or `$in` of literals only; undefined otherwise. */
function allowed(op: string, operand: unknown): Literal[] | undefined {
  if (op === '$eq') return isLiteral(operand) ? [operand] : undefined;
  if (op === '$in') return Array.isArray(operand) && operand.length > 0 && operand.every(isLiteral) ? operand : undefined;
  return undefined;
}

/** The condition on one path allowing only `values`; undefined when the path is not one the pre-screen knows. */
function onPath(path: string, values: Literal[], param: Placeholder): string | undefined {
  if (COLUMNS.has(path)) {
    if (!values.every((v) => typeof v === 'string')) return undefined;
    return `${path} = ANY (${param(values)}::text[])`;
  }
  const [root, ...steps] = path.split('.');
  if (!DOCUMENTS.has(root) || !steps.length || steps.some((s) => s === '')) return undefined;
  const jsonpath = `$${steps.map((s) => `.${JSON.stringify(s)}`).join('')} ? (${values.map((_, i) => `@ == $v${i}`).join(' || ')})`;
  const vars = Object.fromEntries(values.map((v, i) => [`v${i}`, v]));
  return `jsonb_path_exists(${root}, ${param(jsonpath)}::jsonpath, ${param(JSON.stringify(vars))}::jsonb)`;
}

/** The pre-screen of a checked filter as SQL conditions to AND together (none when nothing is certain). */
export function filterPrescreen(filter: Record<string, unknown>, param: Placeholder): string[] {
  const conditions: string[] = [];
  const conjunction = (node: unknown) => {
    if (!isPlainObject(node)) return;
    for (const [key, value] of Object.entries(node)) {
      if (key === '$and') {
        if (Array.isArray(value)) value.forEach(conjunction);
        continue;
      }
      if (key.startsWith('$')) continue;
      const ops = isOperatorObject(value) ? Object.entries(value) : [['$eq', value] as const];
      for (const [op, operand] of ops) {
        const values = allowed(op, operand);
        const sql = values && onPath(key, values, param);
        if (sql) conditions.push(sql);
      }
    }
  };
  conjunction(filter);
  return conditions;
}
