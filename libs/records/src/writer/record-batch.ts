import {
  ChangeSet,
  columnValues,
  diffFields,
  DomainError,
  ErrorCode,
  FieldSpec,
  IdPrefix,
  insertRows,
  isId,
  lockRows,
  lockRowsAt,
  newId,
  updateRows,
} from '@crm/common';
import { BuiltInSlug, builtInEntry, CustomFieldBuiltIn, EventDraft, RequestContext } from '@crm/contracts';
import { ChangeDraft, createdChange, deletedChange, updatedChange } from '@crm/messaging';
import { ClassConstructor } from 'class-transformer';
import { EntityManager } from 'typeorm';
import { BatchRecording, BatchWriter, CreateItem, DeleteItem, ItemOutcome, UpdateItem, UpsertKey } from '../batch/batch-runner';
import { BuiltInCustomFieldsService } from '../custom-fields/built-in-custom-fields.service';
import { BuiltInRecord } from './record-columns';
import { RemoteRecords } from './references';
import { NOW_MS } from './sql';

type Row = BuiltInRecord & { id: string };

/** The time a new row's columns are handed: a stand-in, recognised by identity, for the transaction's time. */
const CLOCK = new Date(0);

/** A field naming another record that must exist when it is written. */
export interface ReferenceField {
  field: string;
  /** The object it names: one of the writing service's (in the table its slug names), or one another service keeps, asked of it. */
  table: BuiltInSlug;
  noun: string;
}

/** What a write of one item reads besides its body and row (a deal's stage), or the item's 400; and the clock, when read with it. */
export interface Resolved<P> {
  byItem: Map<number, P | DomainError>;
  now?: Date;
}

/** A unique field an upsert matches on, compared as the unique index compares it. */
export interface UniqueField<E> {
  field: string;
  prop: keyof E & string;
  /** The indexed expression, over the table's columns: `lower(email)`. */
  expression: string;
  /** The conflict a single write answers when the value is taken, given the record that holds it. */
  taken(value: string, holder: string | undefined): DomainError;
}

/**
 * One built-in object as a batch writes it: its table and fields, the references and unique field its
 * writes check, how a create body becomes a row, and the events and answers its single writes give.
 */
export interface RecordTable<E extends Row, C extends object, U extends object, V, S, P = never> {
  entity: new () => E;
  table: string;
  noun: string;
  prefix: IdPrefix;
  object: CustomFieldBuiltIn;
  createBody: ClassConstructor<C>;
  updateBody: ClassConstructor<U>;
  /** What a PATCH may change, in the order changes are reported. */
  fields: FieldSpec<E>[];
  references: ReferenceField[];
  unique?: UniqueField<E>;
  /** Whether an update checks every reference it is sent before reading its rows (so a reference naming nothing is answered before an unknown record), rather than only those that change. */
  referencesBeforeRows?: boolean;
  /** The SQL of the time writes are dated with: the transaction's (NOW_MS) unless the object dates them by the statement's clock. */
  clock?: string;
  /**
   * What each item needs read beyond its body and row (a deal's stage), once for the batch: `row` is null
   * for a create; an item left out of the answer needs nothing. An item whose answer is an error is refused with it.
   */
  resolve?(m: EntityManager, items: Array<{ index: number; body: C | U; row: E | null }>): Promise<Resolved<P>>;
  /** The columns of a new row other than id, metadata and custom_fields, as entity properties. */
  newRow(body: C, now: Date, resolved?: P): Partial<E>;
  /** The PATCH input for a row, where a field implies another (a new ICP score is dated now). */
  patchInput?(row: E, body: U, now: Date): Record<string, unknown>;
  /** Columns an update derives from what changed (a completed task's completed_at, a deal's stage move). */
  derived?(row: E, set: Partial<E>, now: Date, body: U, resolved?: P): Partial<E>;
  /** What an update changed, as its event and history report it, when not the PATCH fields' own differences. */
  changesOf?(before: E, after: E): ChangeSet;
  created(row: E): EventDraft;
  /** The events of an update, in order; `before` is the row as it was. */
  updated(row: E, changes: ChangeSet, before: E): EventDraft | EventDraft[];
  deleted(row: E): EventDraft;
  /** The record as its single writes show it: the fields a creation's or deletion's change entry lists. */
  changeView(row: E): object;
  /** The history entry of an update, when not every changed field is recorded. */
  updatedEntry?(row: E, changes: ChangeSet): ChangeDraft | null;
  /** Answers of the single create (`S`) and update (`V`), for many rows at once. */
  presentCreated(m: EntityManager, rows: E[], ctx: RequestContext): Promise<S[]>;
  presentUpdated(m: EntityManager, rows: E[], ctx: RequestContext): Promise<V[]>;
  /** What writing these rows does to other records (a contact's primary company association), as events and change entries by row id; `before` is null for a created row. */
  afterWrite?(m: EntityManager, written: Array<{ before: E | null; after: E }>, ctx: RequestContext): Promise<Map<string, BatchRecording>>;
  /** What removing these rows does first (unlinking the records that name them), as events and change entries by row id, in order. */
  beforeRemove?(m: EntityManager, rows: E[]): Promise<Map<string, BatchRecording>>;
}

/** Which of `ids` name rows of `table`, key-share locked until commit so they cannot vanish before the write does. */
async function existingIds(m: EntityManager, table: BuiltInSlug, ids: string[]): Promise<Set<string>> {
  if (!ids.length) return new Set();
  const rows: Array<{ id: string }> = await m.query(`SELECT id FROM ${table} WHERE id = ANY($1::text[]) FOR KEY SHARE`, [ids]);
  return new Set(rows.map((r) => r.id));
}

/**
 * The set-based batch writes of a built-in object of this service: each operation is a fixed number of
 * statements (lock or insert, reference checks per referenced table, one multi-row write) whatever the
 * number of items; the runner adds the one outbox insert.
 */
export class RecordBatchWriter<E extends Row, C extends object, U extends object, V, S, P = never> implements BatchWriter<C, U, V | S> {
  readonly noun: string;
  readonly createBody: ClassConstructor<C>;
  readonly updateBody: ClassConstructor<U>;

  constructor(
    private readonly spec: RecordTable<E, C, U, V, S, P>,
    private readonly customFields: BuiltInCustomFieldsService,
    private readonly remote: RemoteRecords,
  ) {
    this.noun = spec.noun;
    this.createBody = spec.createBody;
    this.updateBody = spec.updateBody;
  }

  async insert(m: EntityManager, ctx: RequestContext, items: CreateItem<C>[]): Promise<ItemOutcome<V | S>[]> {
    if (!items.length) return [];
    const { spec } = this;
    const ids = items.map(() => newId(spec.prefix));
    const outcomes = new Map<number, ItemOutcome<V | S>>();
    const missing = await this.missingReferences(
      m,
      ctx,
      items.map((item) => ({ index: item.index, values: item.body as Record<string, unknown> })),
    );
    const resolved = await this.resolved(
      m,
      items.map((item) => ({ index: item.index, body: item.body, row: null })),
    );
    const custom = await this.customFields.valuesOfMany(
      m,
      ctx,
      spec.object,
      items.map((item, i) => ({ recordId: ids[i], sent: (item.body as { custom_fields?: Record<string, unknown> | null }).custom_fields })),
    );

    const entities: Partial<E>[] = [];
    const pending: Array<{ item: CreateItem<C>; id: string; warnings: ItemOutcome<V>['warnings'] }> = [];
    items.forEach((item, i) => {
      const needs = resolved.byItem.get(item.index);
      const error = missing.get(item.index) ?? (needs instanceof DomainError ? needs : undefined) ?? custom[i].error;
      if (error) return outcomes.set(item.index, { index: item.index, error });
      const body = item.body as { metadata?: Record<string, unknown> | null };
      // created_at and updated_at are left to the columns' default, the transaction's time (NOW_MS), unless the row dates itself.
      const row = spec.newRow(item.body, resolved.now ?? CLOCK, needs as P | undefined);
      entities.push({ ...row, id: ids[i], metadata: body.metadata ?? {}, customFields: custom[i].stored ?? {} } as Partial<E>);
      pending.push({ item, id: ids[i], warnings: custom[i].warnings });
    });
    const rows = (await this.clocked(m, entities)).map((entity) => columnValues(m, spec.entity, entity, Object.keys(entity)));

    const inserted = new Map((await insertRows(m, spec.entity, rows, { ignoreConflicts: spec.unique !== undefined })).map((row) => [row.id, row]));
    const stored = pending.filter((p) => inserted.has(p.id));
    const views = await spec.presentCreated(
      m,
      stored.map((p) => inserted.get(p.id)!),
      ctx,
    );
    const followed = spec.afterWrite
      ? await spec.afterWrite(
          m,
          stored.map((p) => ({ before: null, after: inserted.get(p.id)! })),
          ctx,
        )
      : new Map<string, BatchRecording>();
    stored.forEach((p, i) => {
      const row = inserted.get(p.id)!;
      const after = followed.get(row.id);
      outcomes.set(p.item.index, {
        index: p.item.index,
        status: 201,
        data: views[i],
        warnings: p.warnings,
        events: [spec.created(row), ...(after?.events ?? [])],
        changes: [createdChange(spec.object, row.id, spec.changeView(row)), ...(after?.changes ?? [])],
      });
    });
    const lost = pending.filter((p) => !inserted.has(p.id));
    if (lost.length) {
      // Only a unique value makes a row be skipped: another record holds it, or an earlier item of this batch does.
      const unique = spec.unique!;
      const holders = await this.holders(
        m,
        lost.map((p) => String((p.item.body as Record<string, unknown>)[unique.field])),
      );
      for (const p of lost) {
        const value = String((p.item.body as Record<string, unknown>)[unique.field]);
        outcomes.set(p.item.index, { index: p.item.index, error: unique.taken(value, holders.get(value.toLowerCase())), keyTaken: true });
      }
    }
    return items.map((item) => outcomes.get(item.index)!);
  }

  async update(m: EntityManager, ctx: RequestContext, items: UpdateItem<U>[]): Promise<ItemOutcome<V | S>[]> {
    if (!items.length) return [];
    const { spec } = this;
    // An object that answers a reference naming nothing before an unknown record checks every one sent, first.
    const early = spec.referencesBeforeRows
      ? await this.missingReferences(
          m,
          ctx,
          items.map((item) => ({ index: item.index, values: item.body as Record<string, unknown> })),
        )
      : new Map<number, DomainError>();
    const customSent = items.some((item) => (item.body as { custom_fields?: unknown }).custom_fields !== undefined);
    // Definitions first, then rows: the order a field rename takes them in, as the single update does.
    if (customSent) await this.customFields.lockDefinitions(m, spec.object);
    // The rows and the transaction's time in one statement: the time dates the update and what it implies.
    const locked = await lockRowsAt(
      m,
      spec.entity,
      items.filter((i) => isId(i.id, spec.prefix)).map((i) => i.id),
      spec.clock ?? NOW_MS,
    );
    const found = new Map(locked.rows.map((row) => [row.id, row]));
    // Only found rows are written, so without one the time is never used.
    const now = locked.now ?? new Date();
    const outcomes = new Map<number, ItemOutcome<V | S>>();
    const present = items.filter((item) => {
      const error = early.get(item.index) ?? (found.has(item.id) ? undefined : DomainError.notFound(spec.noun, item.id));
      if (error) outcomes.set(item.index, { index: item.index, error });
      return !error;
    });
    const custom = await this.customFields.valuesOfMany(
      m,
      ctx,
      spec.object,
      present.map((item) => ({
        recordId: item.id,
        sent: (item.body as { custom_fields?: Record<string, unknown> | null }).custom_fields,
        existing: found.get(item.id)!.customFields ?? {},
      })),
    );

    const resolved = await this.resolved(
      m,
      present.map((item) => ({ index: item.index, body: item.body, row: found.get(item.id)! })),
    );

    const diffs: Array<{ item: UpdateItem<U>; row: E; set: Partial<E>; changes: ChangeSet; warnings: ItemOutcome<V>['warnings'] }> = [];
    present.forEach((item, i) => {
      const needs = resolved.byItem.get(item.index);
      const error = custom[i].error ?? (needs instanceof DomainError ? needs : undefined);
      if (error) return outcomes.set(item.index, { index: item.index, error });
      const row = found.get(item.id)!;
      const input = { ...(spec.patchInput ? spec.patchInput(row, item.body, now) : item.body), custom_fields: custom[i].stored };
      const diff = diffFields(row, input, spec.fields);
      const set = { ...diff.set, ...(spec.derived ? spec.derived(row, diff.set, now, item.body, needs as P | undefined) : {}) } as Partial<E>;
      const changes = spec.changesOf ? spec.changesOf(row, { ...row, ...set }) : diff.changes;
      diffs.push({ item, row, set, changes, warnings: custom[i].warnings });
    });
    const changing = diffs.filter((d) => d.changes.changed.length);
    const missing = spec.referencesBeforeRows
      ? new Map<number, DomainError>()
      : await this.missingReferences(
          m,
          ctx,
          changing.map((d) => ({ index: d.item.index, values: Object.fromEntries(d.changes.changed.map((f) => [f, d.changes.current[f]])) })),
        );
    const taken = await this.takenByOthers(m, changing);
    const writes = changing.filter((d) => {
      const error = missing.get(d.item.index) ?? taken.get(d.item.index);
      if (error) outcomes.set(d.item.index, { index: d.item.index, error });
      return !error;
    });

    const columns = new Set<string>();
    const entities = writes.map((d) => {
      const set = { ...d.set, updatedAt: now } as Partial<E>;
      Object.keys(set).forEach((k) => columns.add(k));
      return { ...d.row, ...set };
    });
    // Every row writes the same columns: the union of what changed, a row's own value where it did not change.
    const props = ['id', ...columns];
    const updated = new Map(
      (
        await updateRows(
          m,
          spec.entity,
          entities.map((e) => columnValues(m, spec.entity, e, props)),
        )
      ).map((row) => [row.id, row]),
    );

    const answered = diffs.filter((d) => !outcomes.has(d.item.index));
    const rows = answered.map((d) => updated.get(d.row.id) ?? d.row);
    const views = await spec.presentUpdated(m, rows, ctx);
    const followed = spec.afterWrite
      ? await spec.afterWrite(
          m,
          answered.filter((d) => updated.has(d.row.id)).map((d) => ({ before: d.row, after: updated.get(d.row.id)! })),
          ctx,
        )
      : new Map<string, BatchRecording>();
    answered.forEach((d, i) => {
      const written = updated.has(d.row.id);
      const after = followed.get(d.row.id);
      const entry = spec.updatedEntry ? spec.updatedEntry(rows[i], d.changes) : updatedChange(spec.object, d.row.id, d.changes);
      const events = written ? [spec.updated(rows[i], d.changes, d.row), ...(after?.events ?? [])].flat() : [];
      const changes = written ? [entry, ...(after?.changes ?? [])] : [];
      outcomes.set(d.item.index, { index: d.item.index, status: 200, data: views[i], warnings: d.warnings, events, changes });
    });
    return items.map((item) => outcomes.get(item.index)!);
  }

  async remove(m: EntityManager, _ctx: RequestContext, items: DeleteItem[]): Promise<ItemOutcome<V | S>[]> {
    if (!items.length) return [];
    const { spec } = this;
    const rows = await lockRows(
      m,
      spec.entity,
      items.filter((i) => isId(i.id, spec.prefix)).map((i) => i.id),
    );
    const found = new Map(rows.map((row) => [row.id, row]));
    const before = spec.beforeRemove && rows.length ? await spec.beforeRemove(m, rows) : new Map<string, BatchRecording>();
    if (rows.length) await m.query(`DELETE FROM ${spec.table} WHERE id = ANY($1::text[])`, [rows.map((r) => r.id)]);
    return items.map((item) => {
      const row = found.get(item.id);
      if (!row) return { index: item.index, error: DomainError.notFound(spec.noun, item.id) };
      const unlinked = before.get(row.id) ?? { events: [], changes: [] };
      return {
        index: item.index,
        status: 204,
        events: [...unlinked.events, spec.deleted(row)],
        changes: [...unlinked.changes, deletedChange(spec.object, row.id, spec.changeView(row))],
      };
    });
  }

  async upsertKey(_m: EntityManager, key: string | undefined): Promise<UpsertKey<C>> {
    const unique = this.spec.unique;
    if (!unique)
      throw DomainError.invalid('operation', `${this.spec.table} have no unique field to match an upsert on; use create or update.`, 'upsert_unsupported');
    if (key !== undefined && key !== unique.field)
      throw DomainError.invalid('key', `${this.spec.table} are matched on ${unique.field}; key must be '${unique.field}' or left out.`);
    return {
      field: unique.field,
      valueOf: (body) => {
        const value = (body as Record<string, unknown>)[unique.field];
        return typeof value === 'string' ? value.toLowerCase() : undefined;
      },
      match: (m, values) => this.holders(m, values),
    };
  }

  /** The record holding each of these unique values, by lowercased value. */
  private async holders(m: EntityManager, values: string[]): Promise<Map<string, string>> {
    const unique = this.spec.unique!;
    if (!values.length) return new Map();
    const rows: Array<{ id: string; value: string }> = await m.query(
      `SELECT id, ${unique.expression} AS value FROM ${this.spec.table} WHERE ${unique.expression} = ANY($1::text[])`,
      [values.map((v) => v.toLowerCase())],
    );
    return new Map(rows.map((r) => [r.value, r.id]));
  }

  /** Updates whose new unique value another record holds, or an earlier update of this batch takes. */
  private async takenByOthers(m: EntityManager, diffs: Array<{ item: UpdateItem<U>; row: E; changes: ChangeSet }>): Promise<Map<number, DomainError>> {
    const unique = this.spec.unique;
    const errors = new Map<number, DomainError>();
    if (!unique) return errors;
    const moving = diffs.filter((d) => d.changes.changed.includes(unique.field) && d.changes.current[unique.field] !== null);
    const holders = await this.holders(
      m,
      moving.map((d) => String(d.changes.current[unique.field])),
    );
    const claimed = new Set<string>();
    for (const d of moving) {
      const value = String(d.changes.current[unique.field]);
      const holder = holders.get(value.toLowerCase());
      if ((holder !== undefined && holder !== d.row.id) || claimed.has(value.toLowerCase())) errors.set(d.item.index, unique.taken(value, holder));
      claimed.add(value.toLowerCase());
    }
    return errors;
  }

  /**
   * The references of each item that name no record, as the single write's 400 (one issue per field). One
   * lookup per referenced table of this service, and one request for all those another service keeps.
   */
  private async missingReferences(
    m: EntityManager,
    ctx: RequestContext,
    items: Array<{ index: number; values: Record<string, unknown> }>,
  ): Promise<Map<number, DomainError>> {
    const errors = new Map<number, DomainError>();
    const named = (ref: ReferenceField) => items.map((item) => item.values[ref.field]).filter((id): id is string => typeof id === 'string');
    const wanted = new Map<BuiltInSlug, string[]>();
    for (const ref of this.spec.references) wanted.set(ref.table, [...new Set([...(wanted.get(ref.table) ?? []), ...named(ref)])]);
    const service = builtInEntry(this.spec.object)?.service;
    const found = new Map<BuiltInSlug, Set<string>>();
    const elsewhere = new Map<BuiltInSlug, string[]>();
    for (const [table, ids] of wanted) {
      if (!ids.length) continue;
      if (builtInEntry(table)?.service === service) found.set(table, await existingIds(m, table, ids));
      else elsewhere.set(table, ids);
    }
    if (elsewhere.size) for (const [table, ids] of await this.remote.existingOf(ctx, elsewhere)) found.set(table, ids);
    for (const item of items) {
      const issues = this.spec.references
        .filter((ref) => typeof item.values[ref.field] === 'string' && !found.get(ref.table)?.has(item.values[ref.field] as string))
        .map((ref) => ({ field: ref.field, code: 'not_found', message: `No ${ref.noun} with id '${item.values[ref.field] as string}'.` }));
      if (issues.length) errors.set(item.index, new DomainError(ErrorCode.ValidationFailed, issues.map((i) => i.message).join(' '), issues));
    }
    return errors;
  }

  /** What the object's items need read besides their rows (RecordTable.resolve), or nothing. */
  private async resolved(m: EntityManager, items: Array<{ index: number; body: C | U; row: E | null }>): Promise<Resolved<P>> {
    if (!this.spec.resolve || !items.length) return { byItem: new Map() };
    return this.spec.resolve(m, items);
  }

  /**
   * New rows with every CLOCK value (what `newRow` was handed as the time) replaced by the transaction's
   * time (NOW_MS), read only when a row uses it: most creates need no clock of their own.
   */
  private async clocked(m: EntityManager, entities: Partial<E>[]): Promise<Partial<E>[]> {
    const dated = (entity: Partial<E>) => Object.values(entity).some((v) => v === CLOCK);
    if (!entities.some(dated)) return entities;
    const [{ now }] = (await m.query(`SELECT ${this.spec.clock ?? NOW_MS} AS now`)) as Array<{ now: Date }>;
    return entities.map((entity) =>
      dated(entity) ? (Object.fromEntries(Object.entries(entity).map(([k, v]) => [k, v === CLOCK ? now : v])) as Partial<E>) : entity,
    );
  }
}
