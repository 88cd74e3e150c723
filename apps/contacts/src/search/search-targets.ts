import { SlugKeptBy, SlugWith } from '@crm/contracts';
import { builtInTarget, searchColumn, SearchField, SearchTarget } from '@crm/records';

/** A contact's full name, as its search index holds it (the migration's expression). */
export const contactName = (row = 't.') => `btrim(coalesce(${row}first_name, '') || ' ' || coalesce(${row}last_name, ''))`;
const CONTACT_NAME = contactName();

const joined =
  (...columns: string[]) =>
  (row: string) =>
    columns.map((c) => `coalesce(${row}${c}, '')`).join(` || ' ' || `);

/** Each table's searchable text, as its word index is built on it (SQL for a row prefix, `t.` or none). */
export const SEARCH_WORDS: Record<string, (row: string) => string> = {
  contacts: joined('first_name', 'last_name', 'email', 'title'),
  companies: joined('name', 'domain'),
  users: joined('name', 'email'),
  activities: joined('subject'),
  tasks: joined('title'),
  object_records: (row) => `(${row}"values")::text`,
};

/** The searchable objects this service keeps, as GET /search reads them; weights and rules are in docs/search.md. */
const LOCAL_TARGETS: Record<SlugWith<'searchable'> & SlugKeptBy<'contacts'>, SearchTarget> = {
  contacts: builtInTarget('contacts', `coalesce(nullif(${CONTACT_NAME}, ''), t.email)`, 't.email', SEARCH_WORDS.contacts('t.'), [
    { name: 'name', value: CONTACT_NAME, rule: 'text', weight: 1 },
    searchColumn('email', 'email', 1, true),
    searchColumn('phone', 'phone'),
    searchColumn('title', 'text', 0.9),
  ]),
  companies: builtInTarget('companies', 't.name', 't.domain', SEARCH_WORDS.companies('t.'), [
    searchColumn('name', 'text'),
    searchColumn('domain', 'domain', 1, true),
  ]),
  users: builtInTarget('users', 't.name', 't.email', SEARCH_WORDS.users('t.'), [searchColumn('name', 'text'), searchColumn('email', 'email')]),
  activities: builtInTarget('activities', 'coalesce(t.subject, t.type)', 't.type', SEARCH_WORDS.activities('t.'), [searchColumn('subject', 'text', 0.9)]),
  tasks: builtInTarget('tasks', 't.title', 't.status', SEARCH_WORDS.tasks('t.'), [searchColumn('title', 'text', 0.9)]),
};

export const localTarget = (object: string): SearchTarget | undefined =>
  Object.hasOwn(LOCAL_TARGETS, object) ? LOCAL_TARGETS[object as keyof typeof LOCAL_TARGETS] : undefined;

const literal = (text: string) => `'${text.replace(/'/g, "''")}'`;

/**
 * A custom object's searchable fields as a target. Its candidates come from one word index over each
 * record's values, whatever fields are searchable; the ranks then read only the searchable ones. Phone
 * fields have no index of their own: a phone-shaped query reads the object's records.
 */
export function customTarget(type: { id: string; slug: string; name: string; fields: Array<{ name: string; type: string }> }): SearchTarget {
  const fields: SearchField[] = type.fields.map((f) => ({
    name: f.name,
    value: `(t."values" ->> ${literal(f.name)})`,
    rule: f.type === 'email' ? 'email' : f.type === 'phone' ? 'phone' : 'text',
    weight: 0.9,
  }));
  return {
    object: type.slug,
    table: 'object_records',
    title: `coalesce(${fields.map((f) => f.value).join(', ')}, t.id)`,
    subtitle: literal(type.name),
    fields,
    words: SEARCH_WORDS.object_records('t.'),
    where: `t.object_type_id = ${literal(type.id)}`,
  };
}
