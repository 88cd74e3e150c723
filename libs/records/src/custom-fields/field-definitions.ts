import { DomainError, ErrorCode, FieldIssue, validationFailed } from '@crm/common';
import { CustomFieldDefinition, definitionProblems, SchemaLimits, UpdateFieldDefinitionDto } from '@crm/contracts';
import { EntityManager } from 'typeorm';

/** The definitions with `def` appended: its name must be free and the object below its field limit. */
export function appendDefinition(
  existing: readonly CustomFieldDefinition[],
  def: CustomFieldDefinition,
  reserved: ReadonlySet<string> = new Set(),
): CustomFieldDefinition[] {
  if (reserved.has(def.name)) throw duplicateField(def.name, 'a built-in field of this object');
  if (existing.some((f) => f.name === def.name)) throw duplicateField(def.name, 'an existing field');
  if (existing.length >= SchemaLimits.fieldsPerObject) {
    throw new DomainError(ErrorCode.Conflict, `An object may have at most ${SchemaLimits.fieldsPerObject} custom fields.`);
  }
  return [...existing, def];
}

/** The named field, or a 404 naming the object. */
export function definitionNamed(fields: readonly CustomFieldDefinition[], name: string, slug: string): CustomFieldDefinition {
  const found = fields.find((f) => f.name === name);
  if (!found) throw new DomainError(ErrorCode.NotFound, `No custom field '${name}' on '${slug}'.`);
  return found;
}

/**
 * The definitions after PATCH /objects/:slug/fields/:name, and the new name when the field is renamed;
 * undefined when nothing changes. The new name must be free, as on creation.
 */
export function editedDefinitions(
  fields: readonly CustomFieldDefinition[],
  name: string,
  dto: UpdateFieldDefinitionDto,
  slug: string,
  reserved: ReadonlySet<string> = new Set(),
): { fields: CustomFieldDefinition[]; renamedTo?: string } | undefined {
  const current = definitionNamed(fields, name, slug);
  const renamedTo = dto.name !== undefined && dto.name !== name ? dto.name : undefined;
  if (renamedTo && (fields.some((f) => f.name === renamedTo) || reserved.has(renamedTo))) throw duplicateField(renamedTo, 'a field of this object');
  const label = dto.label ?? current.label;
  if (!renamedTo && label === current.label) return undefined;
  return { fields: fields.map((f) => (f.name === name ? { ...f, name: renamedTo ?? name, label } : f)), renamedTo };
}

/**
 * Definitions must be consistent (enum values for enums, a target for references...), named once, and
 * reference an object the owner can check values of.
 */
export async function checkDefinitions(
  defs: readonly CustomFieldDefinition[],
  path: string,
  canReference: (target: string) => Promise<boolean>,
): Promise<void> {
  const issues: FieldIssue[] = [];
  const seen = new Set<string>();
  const single = path === 'field';
  for (const [i, def] of defs.entries()) {
    const at = single ? path : `${path}.${i}`;
    if (seen.has(def.name)) issues.push({ field: `${at}.name`, code: 'duplicate', message: `${at}.name '${def.name}' is used by another field` });
    seen.add(def.name);
    issues.push(...definitionProblems(def, at).map((p) => ({ ...p, message: `${p.field.replace(/\.[a-z_]+$/, '')}: ${p.message}` })));
    for (const [key, target] of [
      ['reference_target', def.reference_target],
      ['items.reference_target', def.items?.reference_target],
    ] as const) {
      if (target && !(await canReference(target))) {
        issues.push({ field: `${at}.${key}`, code: 'not_found', message: `${at}.${key} names no object with records it can refer to: '${target}'` });
      }
    }
  }
  if (issues.length) throw validationFailed(issues);
}

/**
 * Moves the stored values of custom field `from` to `to` in a jsonb column, or removes them when `to` is
 * null, in one statement over the rows holding one (narrowed by `scope`).
 */
export function moveStoredValues(
  m: EntityManager,
  store: { table: string; column: string; scope?: { column: string; value: string } },
  from: string,
  to: string | null,
): Promise<unknown> {
  const { table, column } = store;
  const params: unknown[] = [from];
  let set = `${column} - $1::text`;
  if (to !== null) {
    params.push(to);
    set = `(${column} - $1::text) || jsonb_build_object($2::text, ${column} -> $1::text)`;
  }
  let where = `${column} ? $1::text`;
  if (store.scope) {
    params.push(store.scope.value);
    where += ` AND ${store.scope.column} = $${params.length}`;
  }
  return m.query(`UPDATE ${table} SET ${column} = ${set} WHERE ${where}`, params);
}

export function duplicateField(name: string, what: string): DomainError {
  return DomainError.conflict(`A field named '${name}' already exists: ${what}.`, [
    { field: 'name', code: 'duplicate', message: `name '${name}' is already ${what}` },
  ]);
}
