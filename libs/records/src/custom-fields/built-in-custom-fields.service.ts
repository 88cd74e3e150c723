import { DomainError, ErrorCode, findById } from '@crm/common';
import {
  acceptsCustomFields,
  builtInFieldNames,
  builtInObject,
  BuiltInCustomFieldsState,
  CUSTOM_FIELD_OWNERS,
  CustomFieldBuiltIn,
  customFieldBuiltInsOf,
  CustomFieldService,
  EventType,
  FieldDefinitionDto,
  normaliseDefinition,
  NO_CUSTOM_FIELDS,
  ObjectSchemaView,
  presentBuiltInObject,
  RequestContext,
  UpdateFieldDefinitionDto,
  UpdateObjectTypeDto,
  ValidationWarning,
} from '@crm/contracts';
import { OutboxService } from '@crm/messaging';
import { Inject, Injectable, Provider, Type } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { QueryDeepPartialEntity } from 'typeorm/query-builder/QueryPartialEntity';
import { BuiltInCustomFields } from './built-in-custom-fields.entity';
import { CustomInstantIndexes } from './custom-instant-indexes';
import { enforceFieldValues, enforceFieldValuesOfMany, EnforcementInput, withoutNulls } from './field-enforcement';
import { appendDefinition, checkDefinitions, definitionNamed, editedDefinitions, moveStoredValues } from './field-definitions';
import { reportSoftWarnings } from '@crm/runtime';

export const CUSTOM_FIELDS_OWNER = Symbol('CUSTOM_FIELDS_OWNER');
const NOW_MS = `date_trunc('milliseconds', now())`;

/** What the owning service knows about the records custom field values may refer to. */
export abstract class CustomFieldReferences {
  /** Whether a custom field of `ownSlug` may refer to records of `target` (so values can be checked). */
  abstract canReference(m: EntityManager, target: string, ownSlug: string): Promise<boolean>;
  /** Which of `ids` name records of `target`; local rows key-share locked until commit. */
  abstract existing(m: EntityManager, ctx: RequestContext, target: string, ids: string[]): Promise<Set<string>>;
}

/**
 * Custom fields of the built-in objects a service owns (contacts, companies, activities and tasks in the
 * contacts service; deals and pipelines in the deals service): their definitions and enforcement level in
 * the service's `built_in_custom_fields` table, and their values in each record's `custom_fields` column,
 * whose table is named like the object.
 */
@Injectable()
export class BuiltInCustomFieldsService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly outbox: OutboxService,
    private readonly references: CustomFieldReferences,
    @Inject(CUSTOM_FIELDS_OWNER) private readonly owner: CustomFieldService,
    private readonly instantIndexes: CustomInstantIndexes,
  ) {
    instantIndexes.register({
      tables: customFieldBuiltInsOf(owner),
      targets: async (m) => {
        const rows = await m.getRepository(BuiltInCustomFields).find();
        return rows
          .filter((row) => this.owns(row.objectSlug))
          .flatMap((row) => row.fields.filter((f) => f.type === 'datetime').map((f) => ({ table: row.objectSlug, column: 'custom_fields', field: f.name })));
      },
    });
  }

  /** Whether this service keeps the custom fields of `slug`. */
  owns(slug: string): slug is CustomFieldBuiltIn {
    return acceptsCustomFields(slug) && CUSTOM_FIELD_OWNERS[slug] === this.owner;
  }

  async state(m: EntityManager, slug: string): Promise<BuiltInCustomFieldsState> {
    const row = await m.findOneBy(BuiltInCustomFields, { objectSlug: slug });
    return row ? { fields: row.fields, enforcementLevel: row.enforcementLevel } : NO_CUSTOM_FIELDS;
  }

  /** The custom fields of every object this service owns, for GET /schema. */
  async states(): Promise<Record<string, BuiltInCustomFieldsState>> {
    const rows = await this.dataSource.getRepository(BuiltInCustomFields).find();
    const states: Record<string, BuiltInCustomFieldsState> = {};
    for (const slug of customFieldBuiltInsOf(this.owner)) {
      const row = rows.find((r) => r.objectSlug === slug);
      states[slug] = row ? { fields: row.fields, enforcementLevel: row.enforcementLevel } : NO_CUSTOM_FIELDS;
    }
    return states;
  }

  async describe(slug: string): Promise<ObjectSchemaView> {
    return presentBuiltInObject(this.object(slug), await this.state(this.dataSource.manager, slug));
  }

  /**
   * Holds an object's definitions (shared) until commit. An update that sends custom_fields takes it before
   * locking its record, in the order a field rename takes them, so the two wait for each other instead of
   * deadlocking, and the update then sees the renamed fields.
   */
  async lockDefinitions(m: EntityManager, slug: CustomFieldBuiltIn): Promise<void> {
    await m.query(`SELECT 1 FROM built_in_custom_fields WHERE object_slug = $1 FOR SHARE`, [slug]);
  }

  /**
   * The `custom_fields` to store for a write of a record of `slug`, checked at the object's enforcement level
   * (soft warnings go to the reply, see SoftWarningsInterceptor). On update, sent keys merge into `existing`,
   * null removes a key, and `custom_fields: null` removes them all. Undefined when an update did not send them.
   */
  async values(
    m: EntityManager,
    ctx: RequestContext,
    slug: CustomFieldBuiltIn,
    recordId: string,
    sent: Record<string, unknown> | null | undefined,
    existing?: Record<string, unknown>,
  ): Promise<Record<string, unknown> | undefined> {
    const partial = existing !== undefined;
    if (partial && sent === undefined) return undefined;
    const values = sent === null || sent === undefined ? Object.fromEntries(Object.keys(existing ?? {}).map((k) => [k, null])) : sent;
    const stored = withoutNulls({ ...(existing ?? {}), ...values });
    // Shared until commit, so a field renamed or removed meanwhile is waited for, never half-seen.
    const row = await findById(m, BuiltInCustomFields, slug, 'share');
    const target = { slug, level: row?.enforcementLevel ?? 'hard', fields: row?.fields ?? [] };
    const input = { values, stored, partial, store: { table: slug, column: 'custom_fields', recordId }, path: 'custom_fields' };
    reportSoftWarnings(await enforceFieldValues(m, target, input, (t, ids) => this.references.existing(m, ctx, t, ids)));
    return stored;
  }

  /**
   * `values` for many records of one object in one batch write: the definitions are read (and share-locked)
   * once; each item gets its values to store and its soft warnings, or the error its single write would
   * have given. An item whose custom_fields were not sent on update gets `stored: undefined`.
   */
  async valuesOfMany(
    m: EntityManager,
    ctx: RequestContext,
    slug: CustomFieldBuiltIn,
    items: ReadonlyArray<{ recordId: string; sent: Record<string, unknown> | null | undefined; existing?: Record<string, unknown> }>,
  ): Promise<Array<{ stored?: Record<string, unknown>; warnings: ValidationWarning[]; error?: DomainError }>> {
    if (!items.some((item) => item.existing === undefined || item.sent !== undefined)) return items.map(() => ({ warnings: [] }));
    const row = await findById(m, BuiltInCustomFields, slug, 'share');
    const target = { slug, level: row?.enforcementLevel ?? 'hard', fields: row?.fields ?? [] };
    const lookup = (t: string, ids: string[]) => this.references.existing(m, ctx, t, ids);
    const results: Array<{ stored?: Record<string, unknown>; warnings: ValidationWarning[]; error?: DomainError }> = items.map(() => ({ warnings: [] }));
    const checked: Array<{ at: number; input: EnforcementInput }> = [];
    items.forEach(({ recordId, sent, existing }, at) => {
      const partial = existing !== undefined;
      if (partial && sent === undefined) return;
      const values = sent === null || sent === undefined ? Object.fromEntries(Object.keys(existing ?? {}).map((k) => [k, null])) : sent;
      const stored = withoutNulls({ ...(existing ?? {}), ...values });
      checked.push({ at, input: { values, stored, partial, store: { table: slug, column: 'custom_fields', recordId }, path: 'custom_fields' } });
    });
    // Without unique or reference fields this reads nothing: the checks are on the values alone.
    const outcomes = await enforceFieldValuesOfMany(
      m,
      target,
      checked.map((c) => c.input),
      lookup,
    );
    checked.forEach(({ at, input }, i) => {
      const outcome = outcomes[i];
      results[at] = outcome instanceof DomainError ? { warnings: [], error: outcome } : { stored: input.stored, warnings: outcome };
    });
    return results;
  }

  /** A built-in object's name and status are fixed; the enforcement level of its custom fields may change. */
  async setLevel(slug: string, dto: UpdateObjectTypeDto): Promise<ObjectSchemaView> {
    const fixed = (['name', 'status'] as const).filter((key) => dto[key] !== undefined);
    if (fixed.length) {
      throw DomainError.invalid(fixed[0], `'${slug}' is a built-in object: its ${fixed.join(' and ')} cannot change, only its enforcement_level.`);
    }
    const object = this.object(slug);
    return this.change(slug, async (m, row) => {
      if (dto.enforcement_level === undefined || dto.enforcement_level === row.enforcementLevel) return undefined;
      await this.save(m, slug, { enforcementLevel: dto.enforcement_level }, 'enforcement_level');
      return presentBuiltInObject(object, { fields: row.fields, enforcementLevel: dto.enforcement_level });
    });
  }

  async addField(slug: string, dto: FieldDefinitionDto): Promise<ObjectSchemaView> {
    const object = this.object(slug);
    const def = normaliseDefinition(dto);
    return this.afterCommit(
      this.change(slug, async (m, row) => {
        const fields = appendDefinition(row.fields, def, builtInFieldNames(slug));
        await checkDefinitions([def], 'field', (target) => this.references.canReference(m, target, slug));
        await this.save(m, slug, { fields }, 'fields');
        return presentBuiltInObject(object, { fields, enforcementLevel: row.enforcementLevel });
      }),
    );
  }

  /** Renames a field or changes its label; a new name moves every stored value to it in the same transaction. */
  async updateField(slug: string, name: string, dto: UpdateFieldDefinitionDto): Promise<ObjectSchemaView> {
    const object = this.object(slug);
    return this.afterCommit(
      this.change(slug, async (m, row) => {
        const edited = editedDefinitions(row.fields, name, dto, slug, builtInFieldNames(slug));
        if (!edited) return undefined;
        if (edited.renamedTo) await moveStoredValues(m, { table: slug, column: 'custom_fields' }, name, edited.renamedTo);
        await this.save(m, slug, { fields: edited.fields }, 'fields');
        return presentBuiltInObject(object, { fields: edited.fields, enforcementLevel: row.enforcementLevel });
      }),
    );
  }

  /** Removes a field and, in the same transaction, every value stored under it. */
  async removeField(slug: string, name: string): Promise<ObjectSchemaView> {
    const object = this.object(slug);
    return this.afterCommit(
      this.change(slug, async (m, row) => {
        definitionNamed(row.fields, name, slug);
        const fields = row.fields.filter((f) => f.name !== name);
        await moveStoredValues(m, { table: slug, column: 'custom_fields' }, name, null);
        await this.save(m, slug, { fields }, 'fields');
        return presentBuiltInObject(object, { fields, enforcementLevel: row.enforcementLevel });
      }),
    );
  }

  /** The date-time indexes follow the committed definitions, built after the answer rather than inside its transaction. */
  private async afterCommit<T>(committed: Promise<T>): Promise<T> {
    const result = await committed;
    this.instantIndexes.refresh();
    return result;
  }

  /** The object, or a 400 when it takes no custom fields (or another service keeps them). */
  private object(slug: string) {
    const object = builtInObject(slug);
    if (!object || !this.owns(slug)) {
      throw new DomainError(
        ErrorCode.InvalidRequest,
        `Custom fields can be defined on ${Object.keys(CUSTOM_FIELD_OWNERS).join(', ')} and custom objects; '${slug}' does not accept them in this version.`,
      );
    }
    return object;
  }

  /**
   * Runs a change of an object's definitions with its row created on first use and locked before any record
   * (record writes lock it shared first too); `work` answers undefined when nothing changes.
   */
  private change(slug: string, work: (m: EntityManager, row: BuiltInCustomFields) => Promise<ObjectSchemaView | undefined>): Promise<ObjectSchemaView> {
    const object = this.object(slug);
    return this.dataSource.transaction(async (m) => {
      await m.query(`INSERT INTO built_in_custom_fields (object_slug) VALUES ($1) ON CONFLICT DO NOTHING`, [slug]);
      const row = await m.findOneOrFail(BuiltInCustomFields, { where: { objectSlug: slug }, lock: { mode: 'pessimistic_write' } });
      return (await work(m, row)) ?? presentBuiltInObject(object, row);
    });
  }

  private async save(m: EntityManager, slug: string, set: Partial<Pick<BuiltInCustomFields, 'fields' | 'enforcementLevel'>>, changed: string): Promise<void> {
    await m.update(BuiltInCustomFields, { objectSlug: slug }, { ...set, updatedAt: () => NOW_MS } as QueryDeepPartialEntity<BuiltInCustomFields>);
    await this.outbox.append(m, EventType.ObjectTypeUpdated, { object_type_id: null, slug, changed: [changed] });
  }
}

/** Providers of BuiltInCustomFieldsService for a service that keeps the custom fields of `owner`'s objects. */
export function builtInCustomFieldsProviders(owner: CustomFieldService, references: Type<CustomFieldReferences>): Provider[] {
  return [
    { provide: CUSTOM_FIELDS_OWNER, useValue: owner },
    references,
    { provide: CustomFieldReferences, useExisting: references },
    CustomInstantIndexes,
    BuiltInCustomFieldsService,
  ];
}
