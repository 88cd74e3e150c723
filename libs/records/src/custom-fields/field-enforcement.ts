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
export async function enforceFieldValues(
  m: EntityManager,
  target: EnforcementTarget,
  input: EnforcementInput,
  lookup: ReferenceLookup,
): Promise<ValidationWarning[]> {
  const [outcome] = await enforceFieldValuesOfMany(m, target, [input], lookup);
  if (outcome instanceof DomainError) throw outcome;
  return outcome;
}

/**
 * `enforceFieldValues` for many writes of one object (a batch): each input gets its warnings or the error
 * its single write would throw. The inputs share their store's table, column and scope; each unique field
 * is checked for all of them with one statement.
 */
export async function enforceFieldValuesOfMany(
  m: EntityManager,
  target: EnforcementTarget,
  inputs: readonly EnforcementInput[],
  lookup: ReferenceLookup,
): Promise<Array<ValidationWarning[] | DomainError>> {
  const outcomes: Array<ValidationWarning[] | DomainError> = [];
  const checked: Array<{ at: number; input: EnforcementInput; issues: ValidationWarning[]; flagged: Set<string> }> = [];
  for (const input of inputs) {
    const tooLarge = valuesSizeProblem(input.stored);
    if (tooLarge) {
      outcomes.push(DomainError.invalid(input.path, `${input.path} ${tooLarge}`));
      continue;
    }
    outcomes.push([]);
    if (target.level === 'none') continue;
    const { issues, references } = checkFieldValues(target.fields, input.values, input.partial);
    issues.push(...(await missingReferences(references, lookup)));
    checked.push({ at: outcomes.length - 1, input, issues, flagged: new Set(issues.map((i) => i.field)) });
  }
  for (const def of target.fields) {
    if (!def.unique) continue;
    const sent = checked.filter((c) => c.input.values[def.name] !== undefined && c.input.values[def.name] !== null && !c.flagged.has(def.name));
    if (!sent.length) continue;
    const taken = await takenValues(
      m,
      target.slug,
      def,
      sent[0].input.store,
      sent.map((c) => ({ value: c.input.values[def.name], recordId: c.input.store.recordId })),
    );
    for (const at of taken) {
      const value = sent[at].input.values[def.name];
      sent[at].issues.push({ field: def.name, code: 'duplicate', message: `${def.name} ${JSON.stringify(value)} is already used by another record` });
    }
  }
  for (const { at, input, issues } of checked) {
    const located = issues.map((i) => ({
      ...i,
      field: `${input.path}.${i.field}`,
      message: i.message.startsWith(i.field) ? `${input.path}.${i.message}` : i.message.replace(`'${i.field}'`, `'${input.path}.${i.field}'`),
    }));
    outcomes[at] = target.level === 'hard' && located.length ? validationFailed(located) : located;
  }
  return outcomes;
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
 * Which of `sent` (by position) another record already holds in the unique field `def`, in one statement.
 * A transaction-scoped advisory lock per object and field serialises the writers of that field, so two
 * racing writes cannot both pass. The test is containment, which the GIN index on the column serves (an
 * email, compared without case, the one on its lower-cased form), beside the exact comparison it implies.
 */
async function takenValues(
  m: EntityManager,
  slug: string,
  def: CustomFieldDefinition,
  store: ValueStore,
  sent: Array<{ value: unknown; recordId: string }>,
): Promise<number[]> {
  await lockUniqueFields(m, slug, [def.name]);
  const column = `r.${store.column}`;
  const compare =
    def.type === 'email'
      ? `${foldedValues(column)} @> jsonb_build_object($1::text, lower(c.value #>> '{}')) AND lower(${column}->>$1) = lower(c.value #>> '{}')`
      : `${column} @> jsonb_build_object($1::text, c.value) AND ${column}->$1 = c.value`;
  const params: unknown[] = [def.name, sent.map((s) => JSON.stringify(s.value)), sent.map((s) => s.recordId)];
  let where = `r.id <> c.record_id AND ${compare}`;
  if (store.scope) {
    params.push(store.scope.value);
    where += ` AND r.${store.scope.column} = $4`;
  }
  const rows: Array<{ at: string }> = await m.query(
    `SELECT c.at FROM unnest($2::jsonb[], $3::text[]) WITH ORDINALITY AS c(value, record_id, at)
      WHERE EXISTS (SELECT 1 FROM ${store.table} r WHERE ${where})`,
    params,
  );
  return rows.map((row) => Number(row.at) - 1);
}

/**
 * A jsonb column's values with every string lower-cased, as the indexes for caseless uniqueness hold them:
 * lower-casing the JSON text keeps it valid JSON (escapes are lower case) and changes only the strings.
 */
function foldedValues(column: string): string {
  return `lower(${column}::text)::jsonb`;
}

/** Drops keys set to null: a custom value of null means "no value". */
export function withoutNulls(values: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(values).filter(([, v]) => v !== null));
}
