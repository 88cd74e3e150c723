import { BuiltInSlug, builtInEntry } from '@crm/contracts';
import { SearchField, SearchRule, SearchTarget } from './search-sql';

/** A column of the row searched as itself (`t.<name>`, reported as `<name>`); `keyed` when its exact matches come from a key index. */
export const searchColumn = (name: string, rule: SearchRule, weight: SearchField['weight'] = 1, keyed = false): SearchField => ({
  name,
  value: `t.${name}`,
  rule,
  weight,
  ...(keyed ? { keyed } : {}),
});

/**
 * A built-in object as GET /search reads it: from the table its slug names, shown by `title` and `subtitle` (SQL over `t`);
 * `words` is the row's searchable text exactly as the table's word index is built on it.
 */
export const builtInTarget = (object: BuiltInSlug, title: string, subtitle: string, words: string, fields: SearchField[]): SearchTarget => ({
  object,
  table: object,
  title,
  subtitle,
  words,
  fields,
});

/**
 * The searchable text of a row as its word index is built on it, from the registry's `search.columns`:
 * one column as it is, several joined by spaces (SQL for a row prefix, `t.` or none).
 */
export function searchWords(columns: readonly string[], row = ''): string {
  return columns.length === 1 ? `${row}${columns[0]}` : columns.map((c) => `coalesce(${row}${c}, '')`).join(` || ' ' || `);
}

/** A built-in object's search target as its registry entry describes it (`search`): text columns, title and subtitle. */
export function registryTarget(slug: BuiltInSlug): SearchTarget {
  const search = builtInEntry(slug)?.search;
  if (!search) throw new Error(`the registry describes no search of '${slug}'`);
  return builtInTarget(
    slug,
    `t.${search.title}`,
    `t.${search.subtitle}`,
    searchWords(search.columns, 't.'),
    search.columns.map((c) => searchColumn(c, 'text')),
  );
}
