import { DomainError, validationFailed } from '@crm/common';
import { checkFieldValues, CustomFieldDefinition, EnforcementLevel, ReferenceToCheck, ValidationWarning, valuesSizeProblem } from '@crm/contracts';
import { EntityManager } from 'typeorm';

export interface EnforcementTarget {
  slug: string;
  level: EnforcementLevel;
  fields: readonly CustomFieldDefinition[];
}

/** Where the values being written live: a jsonb column, so unique fields can be compared with the other rows. */
export interface ValueStore {
  table: string;
  column: string;
  recordId: string;
  /** Narrows the rows compared, e.g. to one custom object's records. */
  scope?: { column: string; value: string };
}

export interface EnforcementInput {
  /** The values sent: all of them on create, the changed keys on update. */
  values: Record<string, unknown>;
  /** The values as they will be stored, for the size limit. */
  stored: Record<string, unknown>;
  partial: boolean;
  store: ValueStore;
  /** The body key the values came in (`values` or `custom_fields`): issue paths start with it. */
  path: string;
}

/** Which of `ids` name records of `target` (local rows key-share locked until commit). */
export type ReferenceLookup = (target: string, ids: string[]) => Promise<Set<string>>;

/**
 * Applies an object's enforcement level to a write: `none` checks nothing, `soft` returns the problems as
 * warnings, `hard` rejects the write with all of them. The size limit holds at every level.
 */
export async function enforceFieldValues(m: EntityManager, target: EnforcementTarget, input: EnforcementInput, lookup: ReferenceLookup): Promise<ValidationWarning[]> {
  const tooLarge = valuesSizeProblem(input.stored);
  if (tooLarge) throw DomainError.invalid(input.path, `${input.path} ${tooLarge}`);
  if (target.level === 'none') return [];

  const { issues, references } = checkFieldValues(target.fields, input.values, input.partial);
  issues.push(...(await missingReferences(references, lookup)));
  const flagged = new Set(issues.map((i) => i.field));
  for (const def of target.fields) {
    const value = input.values[def.name];
    if (!def.unique || value === undefined || value === null || flagged.has(def.name)) continue;
    if (await taken(m, target.slug, def, value, input.store)) {
      issues.push({ field: def.name, code: 'duplicate', message: `${def.name} ${JSON.stringify(value)} is already used by another record` });
    }
  }
  const located = issues.map((i) => ({
    ...i,
    field: `${input.path}.${i.field}`,
    message: i.message.startsWith(i.field) ? `${input.path}.${i.message}` : i.message.replace(`'${i.field}'`, `'${input.path}.${i.field}'`),
  }));
  if (target.level === 'hard' && located.length) throw validationFailed(located);
  return located;
}

/** Reference values that name no record of their target. */
async function missingReferences(references: ReferenceToCheck[], lookup: ReferenceLookup): Promise<ValidationWarning[]> {
  const byTarget = new Map<string, ReferenceToCheck[]>();
  for (const ref of references) byTarget.set(ref.target, [...(byTarget.get(ref.target) ?? []), ref]);
  const missing: ValidationWarning[] = [];
  for (const [target, refs] of byTarget) {
    const found = await lookup(target, [...new Set(refs.map((r) => r.id))]);
    for (const ref of refs) {
      if (!found.has(ref.id)) missing.push({ field: ref.field, code: 'not_found', message: `${ref.field} names no ${target} record '${ref.id}'` });
    }
  }
  return missing;
}

/**
 * Takes, until the transaction ends, the locks that serialise the writers of these unique fields of an
 * object. Several are taken in the order given; pass them in definition order, as the value checks take them.
 */
export async function lockUniqueFields(m: EntityManager, slug: string, names: readonly string[]): Promise<void> {
  for (const name of names) await m.query(`SELECT pg_advisory_xact_lock(hashtext($1))`, [`crm.unique.${slug}.${name}`]);
}

/**
 * Whether another record already holds `value` in a unique field. A transaction-scoped advisory lock per
 * object and field serialises the writers of that field, so two racing writes cannot both pass.
 */
async function taken(m: EntityManager, slug: string, def: CustomFieldDefinition, value: unknown, store: ValueStore): Promise<boolean> {
  await lockUniqueFields(m, slug, [def.name]);
  const caseless = def.type === 'email';
  const compare = caseless ? `lower(${store.column}->>$1) = lower($2)` : `${store.column}->$1 = $2::jsonb`;
  const params: unknown[] = [def.name, caseless ? String(value) : JSON.stringify(value), store.recordId];
  let where = `id <> $3 AND ${compare}`;
  if (store.scope) {
    params.push(store.scope.value);
    where += ` AND ${store.scope.column} = $4`;
  }
  const rows: unknown[] = await m.query(`SELECT 1 FROM ${store.table} WHERE ${where} LIMIT 1`, params);
  return rows.length > 0;
}

/** Drops keys set to null: a custom value of null means "no value". */
export function withoutNulls(values: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(values).filter(([, v]) => v !== null));
}
