import { BuiltInSlug } from '@crm/contracts';
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
