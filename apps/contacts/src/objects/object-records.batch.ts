import { canonicalJson, ChangeSet, DomainError, IdPrefix, insertRows, isId, lockRows, newId, updateRows, validationFailed } from '@crm/common';
import {
  CustomFieldDefinition,
  event,
  EventDraft,
  EventType,
  ObjectRecordInputDto,
  ObjectRecordView,
  RequestContext,
  UpdateObjectRecordDto,
  ValidationWarning,
} from '@crm/contracts';
import { ChangeDraft, createdChange, deletedChange } from '@crm/messaging';
import { BatchWriter, CreateItem, DeleteItem, ItemOutcome, lockUniqueFields, NOW_MS, UpdateItem, UpsertKey, withoutNulls } from '@crm/records';
import { EntityManager } from 'typeorm';
import { ContactsFieldReferences } from './contacts-field-references';
import { ObjectRecord, ObjectType } from './object-type.entity';
import { presentRecord } from './object-type.presenter';

type ObjectRecordEventType = typeof EventType.ObjectRecordCreated | typeof EventType.ObjectRecordUpdated | typeof EventType.ObjectRecordDeleted;

/** A unique value as the unique rule compares it: emails without case, anything else as canonical JSON. */
function uniqueForm(def: CustomFieldDefinition, value: unknown): string {
  return def.type === 'email' && typeof value === 'string' ? JSON.stringify(value.toLowerCase()) : canonicalJson(value);
}

/**
 * What an update of a record's values changes, by value key as object_record.updated names them: each key
 * sent with a value other than the stored one, with null standing for no value. Values are JSON as stored:
 * 1 and "1" differ here, key order does not.
 */
export function recordValueChanges(stored: Record<string, unknown>, sent: Record<string, unknown>): ChangeSet {
  const changes: ChangeSet = { changed: [], previous: {}, current: {} };
  for (const key of Object.keys(sent)) {
    const before = stored[key] ?? null;
    const after = sent[key] ?? null;
    if (canonicalJson(before) === canonicalJson(after)) continue;
    changes.changed.push(key);
    changes.previous[key] = before;
    changes.current[key] = after;
  }
  return changes;
}

/**
 * The change entry of a values update, each value under its own path (`values.<key>`), as custom values
 * are named across the change history; null when nothing changed.
 */
export function valuesChange(slug: string, recordId: string, changes: ChangeSet): ChangeDraft | null {
  if (!changes.changed.length) return null;
  const paths = changes.changed.map((key) => [key, `values.${key}`] as const);
  return {
    object: slug,
    record_id: recordId,
    action: 'updated',
    changed: paths.map(([, path]) => path),
    previous: Object.fromEntries(paths.map(([key, path]) => [path, changes.previous[key]])),
    current: Object.fromEntries(paths.map(([key, path]) => [path, changes.current[key]])),
  };
}

/**
 * Batch writes of one custom object's records (`/objects/:slug/records/batch`), with the rules of the
 * single record writes: the object is share-locked once, records are locked, inserted and updated with
 * one statement each, and values are checked at the object's enforcement level with the single write's
 * rules (reading the database only for unique and reference fields, each unique field for all items with
 * one statement). Upserts match on the unique field named in `key`.
 */
export class ObjectRecordsBatchWriter implements BatchWriter<ObjectRecordInputDto, UpdateObjectRecordDto, ObjectRecordView> {
  readonly createBody = ObjectRecordInputDto;
  readonly updateBody = UpdateObjectRecordDto;
  readonly noun: string;

  constructor(
    slug: string,
    private readonly writableType: (m: EntityManager) => Promise<ObjectType>,
    /** The type without a lock, outside the batch's transaction (its unique fields, for an upsert's key). */
    private readonly readableType: (m: EntityManager) => Promise<ObjectType>,
    private readonly references: ContactsFieldReferences,
  ) {
    this.noun = `${slug} record`;
  }

  async insert(m: EntityManager, ctx: RequestContext, items: CreateItem<ObjectRecordInputDto>[]): Promise<ItemOutcome<ObjectRecordView>[]> {
    if (!items.length) return [];
    const type = await this.writableType(m);
    const outcomes = new Map<number, ItemOutcome<ObjectRecordView>>();
    const rows: Array<{ item: CreateItem<ObjectRecordInputDto>; id: string; values: Record<string, unknown>; warnings: ValidationWarning[] }> = [];
    const writes = items.map((item) => ({ item, id: newId(IdPrefix.ObjectRecord), sent: item.body.values, values: withoutNulls(item.body.values) }));
    const checked = await this.check(
      m,
      ctx,
      type,
      writes.map((w) => ({ recordId: w.id, sent: w.sent, stored: w.values })),
      false,
    );
    writes.forEach(({ item, id, values }, i) => {
      const outcome = checked[i];
      if (outcome instanceof DomainError) outcomes.set(item.index, { index: item.index, error: outcome });
      else rows.push({ item, id, values, warnings: outcome });
    });
    const inserted = await insertRows(
      m,
      ObjectRecord,
      rows.map((r) => ({ id: r.id, object_type_id: type.id, values: r.values })),
    );
    const byId = new Map(inserted.map((row) => [row.id, row]));
    for (const r of rows) {
      const record = byId.get(r.id)!;
      const event = this.event(EventType.ObjectRecordCreated, record.id, type);
      const change = createdChange(type.slug, record.id, { values: record.values });
      outcomes.set(r.item.index, {
        index: r.item.index,
        status: 201,
        data: presentRecord(record, type),
        warnings: r.warnings,
        events: [event],
        changes: [change],
      });
    }
    return items.map((item) => outcomes.get(item.index)!);
  }

  async update(m: EntityManager, ctx: RequestContext, items: UpdateItem<UpdateObjectRecordDto>[]): Promise<ItemOutcome<ObjectRecordView>[]> {
    if (!items.length) return [];
    const type = await this.writableType(m);
    const found = new Map(
      (
        await lockRows(
          m,
          ObjectRecord,
          items.filter((i) => isId(i.id, IdPrefix.ObjectRecord)).map((i) => i.id),
          `AND object_type_id = '${type.id.replace(/'/g, "''")}'`,
        )
      ).map((r) => [r.id, r]),
    );
    const outcomes = new Map<number, ItemOutcome<ObjectRecordView>>();
    const writes: Array<{
      item: UpdateItem<UpdateObjectRecordDto>;
      record: ObjectRecord;
      values: Record<string, unknown>;
      changes: ChangeSet;
      warnings: ValidationWarning[];
    }> = [];
    const unchanged: Array<{ item: UpdateItem<UpdateObjectRecordDto>; record: ObjectRecord; warnings: ValidationWarning[] }> = [];
    const present = items.flatMap((item) => {
      const record = found.get(item.id);
      if (!record) {
        outcomes.set(item.index, { index: item.index, error: DomainError.notFound(`${type.slug} record`, item.id) });
        return [];
      }
      const sent = item.body.values ?? {};
      return [{ item, record, sent, values: withoutNulls({ ...record.values, ...sent }) }];
    });
    const checked = await this.check(
      m,
      ctx,
      type,
      present.map((p) => ({ recordId: p.record.id, sent: p.sent, stored: p.values })),
      true,
    );
    present.forEach(({ item, record, sent, values }, i) => {
      const outcome = checked[i];
      if (outcome instanceof DomainError) return outcomes.set(item.index, { index: item.index, error: outcome });
      const changes = recordValueChanges(record.values, sent);
      if (changes.changed.length) writes.push({ item, record, values, changes, warnings: outcome });
      else unchanged.push({ item, record, warnings: outcome });
    });
    const updated = new Map(
      (
        await updateRows(
          m,
          ObjectRecord,
          writes.map((w) => ({ id: w.record.id, values: w.values })),
          { updated_at: NOW_MS },
        )
      ).map((r) => [r.id, r]),
    );
    for (const w of writes) {
      const event = this.event(EventType.ObjectRecordUpdated, w.record.id, type, w.changes);
      const change = valuesChange(type.slug, w.record.id, w.changes);
      outcomes.set(w.item.index, {
        index: w.item.index,
        status: 200,
        data: presentRecord(updated.get(w.record.id)!, type),
        warnings: w.warnings,
        events: [event],
        changes: [change],
      });
    }
    for (const u of unchanged) outcomes.set(u.item.index, { index: u.item.index, status: 200, data: presentRecord(u.record, type), warnings: u.warnings });
    return items.map((item) => outcomes.get(item.index)!);
  }

  async remove(m: EntityManager, _ctx: RequestContext, items: DeleteItem[]): Promise<ItemOutcome<ObjectRecordView>[]> {
    if (!items.length) return [];
    const type = await this.writableType(m);
    const ids = items.filter((i) => isId(i.id, IdPrefix.ObjectRecord)).map((i) => i.id);
    const found = new Map((await lockRows(m, ObjectRecord, ids, `AND object_type_id = '${type.id.replace(/'/g, "''")}'`)).map((r) => [r.id, r]));
    if (found.size) await m.query(`DELETE FROM object_records WHERE id = ANY($1::text[])`, [[...found.keys()]]);
    return items.map((item) => {
      const record = found.get(item.id);
      if (!record) return { index: item.index, error: DomainError.notFound(`${type.slug} record`, item.id) };
      const change = deletedChange(type.slug, record.id, { values: record.values });
      return { index: item.index, status: 204, events: [this.event(EventType.ObjectRecordDeleted, item.id, type)], changes: [change] };
    });
  }

  async upsertKey(m: EntityManager, key: string | undefined): Promise<UpsertKey<ObjectRecordInputDto>> {
    const type = await this.readableType(m);
    const unique = type.fields.filter((f) => f.unique).map((f) => f.name);
    if (!unique.length)
      throw DomainError.invalid('operation', `${type.slug} has no unique field to match an upsert on; use create or update.`, 'upsert_unsupported');
    if (key === undefined)
      throw DomainError.invalid('key', `key is required to upsert ${type.slug} records: name one of its unique fields (${unique.join(', ')}).`, 'required');
    const def = type.fields.find((f) => f.name === key && f.unique);
    if (!def) throw DomainError.invalid('key', `key must name a unique field of ${type.slug} (${unique.join(', ')}); '${key}' is not one.`);
    return {
      field: `values.${def.name}`,
      valueOf: (body) => {
        const value = body.values?.[def.name];
        return value === undefined || value === null ? undefined : uniqueForm(def, value);
      },
      match: async (tx, values) => {
        if (!values.length) return new Map();
        // Locked until commit as a single write locks them (the object, then every unique field in order, so
        // neither waits on the other): a concurrent upsert of the same new value then matches the record this
        // one creates instead of failing its unique check, whatever the object's enforcement level.
        await this.writableType(tx);
        await lockUniqueFields(tx, type.slug, unique);
        const expression = def.type === 'email' ? `to_jsonb(lower("values"->>$2))` : `"values"->$2`;
        const rows: Array<{ id: string; value: unknown }> = await tx.query(
          `SELECT id, "values"->$2 AS value FROM object_records WHERE object_type_id = $1 AND ${expression} = ANY($3::jsonb[])`,
          [type.id, def.name, values],
        );
        return new Map(rows.map((r) => [uniqueForm(def, r.value), r.id]));
      },
    };
  }

  /**
   * The single write's checks of each item's values: its warnings, or the error it would have answered.
   * A unique value an earlier item of the batch takes counts as taken, since those rows are not written yet.
   */
  private async check(
    m: EntityManager,
    ctx: RequestContext,
    type: ObjectType,
    items: Array<{ recordId: string; sent: Record<string, unknown>; stored: Record<string, unknown> }>,
    partial: boolean,
  ): Promise<Array<ValidationWarning[] | DomainError>> {
    const store = (recordId: string) => ({ table: 'object_records', column: '"values"', recordId, scope: { column: 'object_type_id', value: type.id } });
    const target = { slug: type.slug, level: type.enforcementLevel, fields: type.fields };
    const outcomes = await this.references.enforceMany(
      m,
      ctx,
      target,
      items.map((item) => ({ values: item.sent, stored: item.stored, partial, store: store(item.recordId), path: 'values' })),
    );
    if (type.enforcementLevel === 'none') return outcomes;
    const claimed = new Map(type.fields.filter((f) => f.unique).map((f) => [f.name, new Set<string>()]));
    return outcomes.map((warnings, i) => {
      if (warnings instanceof DomainError) return warnings;
      for (const def of type.fields.filter((f) => f.unique)) {
        const value = items[i].sent[def.name];
        if (value === undefined || value === null) continue;
        const form = uniqueForm(def, value);
        if (claimed.get(def.name)!.has(form)) {
          const issue = {
            field: `values.${def.name}`,
            code: 'duplicate',
            message: `values.${def.name} ${JSON.stringify(value)} is already used by another record of this batch`,
          };
          if (type.enforcementLevel === 'hard') return validationFailed([issue]);
          warnings.push(issue);
        }
        claimed.get(def.name)!.add(form);
      }
      return warnings;
    });
  }

  private event(type: ObjectRecordEventType, recordId: string, object: ObjectType, changes?: ChangeSet): EventDraft {
    return event(type, { record_id: recordId, object_type_id: object.id, object: object.slug, ...(changes ?? {}) });
  }
}
