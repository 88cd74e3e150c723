import { builtInTarget, SearchField, searchColumn, SearchTarget } from '@crm/runtime';

/** A contact's full name, as its search index holds it (the migration's expression). */
export const contactName = (row = 't.') => `btrim(coalesce(${row}first_name, '') || ' ' || coalesce(${row}last_name, ''))`;
const CONTACT_NAME = contactName();

/** The objects this service keeps, as GET /search reads them; weights and rules are in docs/search.md. */
export const LOCAL_TARGETS: Record<string, SearchTarget> = {
  contacts: builtInTarget('contacts', `coalesce(nullif(${CONTACT_NAME}, ''), t.email)`, 't.email', [
    { name: 'name', value: CONTACT_NAME, rule: 'text', weight: 1 },
    searchColumn('email', 'email'),
    searchColumn('phone', 'phone'),
    searchColumn('title', 'text', 0.9),
  ]),
  companies: builtInTarget('companies', 't.name', 't.domain', [searchColumn('name', 'text'), searchColumn('domain', 'domain')]),
  users: builtInTarget('users', 't.name', 't.email', [searchColumn('name', 'text'), searchColumn('email', 'email')]),
  activities: builtInTarget('activities', 'coalesce(t.subject, t.type)', 't.type', [searchColumn('subject', 'text', 0.9)]),
  tasks: builtInTarget('tasks', 't.title', 't.status', [searchColumn('title', 'text', 0.9)]),
};

const literal = (text: string) => `'${text.replace(/'/g, "''")}'`;

/**
 * A custom object's searchable fields as a target. Its candidates come from one trigram index over each
 * record's folded values, whatever fields are searchable; the ranks then read only the searchable ones.
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
    where: `t.object_type_id = ${literal(type.id)}`,
    candidates: [
      `search_fold(t."values"::text) %> search_fold($1::text)`,
      // Phone fields have no index of their own: a phone-shaped query reads the object's records.
      ...fields.filter((f) => f.rule === 'phone').map((f) => `($2::text <> '' AND search_phone_key(${f.value}) = right($2::text, 7))`),
    ],
  };
}
