import { BuiltInSlug } from '@crm/contracts';
import { SearchField, SearchRule, SearchTarget } from './search-sql';

/** A column of the row searched as itself (`t.<name>`, reported as `<name>`). */
export const searchColumn = (name: string, rule: SearchRule, weight: SearchField['weight'] = 1): SearchField => ({ name, value: `t.${name}`, rule, weight });

/** A built-in object as GET /search reads it: from the table its slug names, shown by `title` and `subtitle` (SQL over `t`). */
export const builtInTarget = (object: BuiltInSlug, title: string, subtitle: string, fields: SearchField[]): SearchTarget => ({
  object,
  table: object,
  title,
  subtitle,
  fields,
});
