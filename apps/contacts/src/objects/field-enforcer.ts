import { DomainError, ErrorCode, validationFailed } from '@crm/common';
import {
  checkFieldValues,
  CustomFieldDefinition,
  DealsInternalRpc,
  EnforcementLevel,
  ReferenceToCheck,
  RequestContext,
  ResolveDealsReply,
  ResolveDealsRequest,
  ValidationWarning,
  valuesSizeProblem,
  internalRequest,
} from '@crm/contracts';
import { CRM_RPC } from '@crm/messaging';
import { Inject, Injectable } from '@nestjs/common';
import { ClientProxy } from '@nestjs/microservices';
import { firstValueFrom } from 'rxjs';
import { EntityManager } from 'typeorm';
import { BuiltInCustomFields } from './object-type.entity';
import { CustomFieldBuiltIn } from './object-type.presenter';
import { reportSoftWarnings } from './soft-warnings';

/** Where the values being written live, so unique fields can be compared with the other records. */
export type ValueStore =
  | { kind: 'record'; objectTypeId: string; recordId: string }
  | { kind: 'built_in'; table: CustomFieldBuiltIn; recordId: string };

export interface EnforcementTarget {
  slug: string;
  level: EnforcementLevel;
  fields: readonly CustomFieldDefinition[];
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

/** Built-in objects whose records live in this service's tables. */
const LOCAL_TABLES: Record<string, string> = { contacts: 'contacts', companies: 'companies', activities: 'activities', tasks: 'tasks' };

/**
 * Applies an object's enforcement level to a write: `none` checks nothing, `soft` returns the problems
 * as warnings, `hard` rejects the write with all of them. The size limit holds at every level.
 */
@Injectable()
export class FieldEnforcer {
  constructor(@Inject(CRM_RPC) private readonly rpc: ClientProxy) {}

  /**
   * The `custom_fields` to store for a write of a built-in object, checked against its custom field
   * definitions at its enforcement level (soft warnings go to the reply, see SoftWarningsInterceptor). On
   * update, sent keys merge into `existing`, null removes a key, and `custom_fields: null` removes them all.
   * Undefined when an update did not send `custom_fields`.
   */
  async builtInValues(
    m: EntityManager,
    ctx: RequestContext,
    table: CustomFieldBuiltIn,
    recordId: string,
    sent: Record<string, unknown> | null | undefined,
    existing?: Record<string, unknown>,
  ): Promise<Record<string, unknown> | undefined> {
    const partial = existing !== undefined;
    if (partial && sent === undefined) return undefined;
    const values = sent === null || sent === undefined ? Object.fromEntries(Object.keys(existing ?? {}).map((k) => [k, null])) : sent;
    const stored = withoutNulls({ ...(existing ?? {}), ...values });
    // Shared until commit, so a field renamed or removed meanwhile is waited for, never half-seen.
    const definitions = await m.findOne(BuiltInCustomFields, { where: { objectSlug: table }, lock: { mode: 'pessimistic_read' } });
    const target: EnforcementTarget = { slug: table, level: definitions?.enforcementLevel ?? 'hard', fields: definitions?.fields ?? [] };
    const store: ValueStore = { kind: 'built_in', table, recordId };
    reportSoftWarnings(await this.enforce(m, ctx, target, { values, stored, partial, store, path: 'custom_fields' }));
    return stored;
  }

  /**
   * Holds a built-in object's custom field definitions (shared) until commit. An update that sends
   * custom_fields takes it before locking its record, in the order a field rename takes them, so the two
   * wait for each other instead of deadlocking, and the update then sees the renamed fields.
   */
  async lockDefinitions(m: EntityManager, table: CustomFieldBuiltIn): Promise<void> {
    await m.query(`SELECT 1 FROM built_in_custom_fields WHERE object_slug = $1 FOR SHARE`, [table]);
  }

  async enforce(m: EntityManager, ctx: RequestContext, target: EnforcementTarget, input: EnforcementInput): Promise<ValidationWarning[]> {
    const tooLarge = valuesSizeProblem(input.stored);
    if (tooLarge) throw DomainError.invalid(input.path, `${input.path} ${tooLarge}`);
    if (target.level === 'none') return [];

    const { issues, references } = checkFieldValues(target.fields, input.values, input.partial);
    issues.push(...(await this.missingReferences(m, ctx, references)));
    const flagged = new Set(issues.map((i) => i.field));
    for (const def of target.fields) {
      const value = input.values[def.name];
      if (!def.unique || value === undefined || value === null || flagged.has(def.name)) continue;
      if (await this.taken(m, target.slug, def, value, input.store)) {
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
  private async missingReferences(m: EntityManager, ctx: RequestContext, references: ReferenceToCheck[]): Promise<ValidationWarning[]> {
    const byTarget = new Map<string, ReferenceToCheck[]>();
    for (const ref of references) byTarget.set(ref.target, [...(byTarget.get(ref.target) ?? []), ref]);
    const missing: ValidationWarning[] = [];
    for (const [target, refs] of byTarget) {
      const ids = [...new Set(refs.map((r) => r.id))];
      const found = await this.existing(m, ctx, target, ids);
      for (const ref of refs) {
        if (!found.has(ref.id)) missing.push({ field: ref.field, code: 'not_found', message: `${ref.field} names no ${target} record '${ref.id}'` });
      }
    }
    return missing;
  }

  /** Which ids exist in `target`; local rows are key-share locked so they cannot vanish before commit. */
  private async existing(m: EntityManager, ctx: RequestContext, target: string, ids: string[]): Promise<Set<string>> {
    if (target === 'deals') {
      const body: ResolveDealsRequest = { deal_ids: ids };
      const reply = await firstValueFrom(this.rpc.send<ResolveDealsReply>(DealsInternalRpc.Resolve, internalRequest(ctx, body)));
      return new Set(reply.deals.map((d) => d.id));
    }
    const table = LOCAL_TABLES[target];
    const rows: { id: string }[] = table
      ? await m.query(`SELECT id FROM ${table} WHERE id = ANY($1) FOR KEY SHARE`, [ids])
      : await m.query(
          `SELECT r.id FROM object_records r JOIN object_types t ON t.id = r.object_type_id
            WHERE t.slug = $1 AND r.id = ANY($2) FOR KEY SHARE OF r`,
          [target, ids],
        );
    return new Set(rows.map((r) => r.id));
  }

  /**
   * Whether another record already holds `value` in a unique field. A transaction-scoped advisory lock per
   * object and field serialises the writers of that field, so two racing writes cannot both pass.
   */
  private async taken(m: EntityManager, slug: string, def: CustomFieldDefinition, value: unknown, store: ValueStore): Promise<boolean> {
    await m.query(`SELECT pg_advisory_xact_lock(hashtext($1))`, [`crm.unique.${slug}.${def.name}`]);
    const caseless = def.type === 'email';
    const compare = caseless ? `lower(COL->>$1) = lower($2)` : `COL->$1 = $2::jsonb`;
    const param = caseless ? String(value) : JSON.stringify(value);
    const rows: unknown[] =
      store.kind === 'record'
        ? await m.query(`SELECT 1 FROM object_records WHERE object_type_id = $3 AND id <> $4 AND ${compare.replace('COL', '"values"')} LIMIT 1`, [
            def.name,
            param,
            store.objectTypeId,
            store.recordId,
          ])
        : await m.query(`SELECT 1 FROM ${store.table} WHERE id <> $3 AND ${compare.replace('COL', 'custom_fields')} LIMIT 1`, [def.name, param, store.recordId]);
    return rows.length > 0;
  }
}

/** A write to an archived object type. */
export function archivedObject(slug: string): DomainError {
  return new DomainError(ErrorCode.Conflict, `The object type '${slug}' is archived; its records are read-only until it is made active again.`);
}

/** Drops keys set to null: a custom value of null means "no value". */
export function withoutNulls(values: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(values).filter(([, v]) => v !== null));
}
