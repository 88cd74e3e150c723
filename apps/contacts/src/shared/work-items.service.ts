import { Injectable } from '@nestjs/common';
import {
  ChangeSet,
  CursorCodec,
  diffFields,
  DomainError,
  FieldSpec,
  findById,
  IdPrefix,
  insertReturning,
  isForeignKeyViolation,
  isId,
  KeysetPage,
  keysetPage,
  newId,
  Page,
  SortablePageQuery,
  updateReturning,
} from '@crm/common';
import { builtInEntry, event, EventPayload, RequestContext } from '@crm/contracts';
import { createdChange, deletedChange, OutboxService, updatedChange } from '@crm/messaging';
import { DataSource, EntityManager } from 'typeorm';
import { QueryDeepPartialEntity } from 'typeorm/query-builder/QueryPartialEntity';
import { BuiltInCustomFieldsService, DealDirectory, NOW_MS, RecordBatchWriter, RecordTable, requireContact } from '@crm/records';
import { WorkItemRecord } from './work-item-record';

/** What a write of any work item may carry besides the fields of its kind. */
export interface WorkItemInput {
  contact_id?: string | null;
  deal_id?: string | null;
  metadata?: Record<string, unknown> | null;
  custom_fields?: Record<string, unknown> | null;
}

/** The types one kind of work item is stored, written and shown with. */
export interface WorkItemTypes {
  row: WorkItemRecord & { id: string };
  create: WorkItemInput;
  update: WorkItemInput;
  view: object;
  summary: unknown;
  event: EventPayload<WorkItemEvent>;
  list: SortablePageQuery;
}

type WorkItemEvent = `${'activity' | 'task'}.${'created' | 'updated' | 'deleted'}`;

/** How one kind of work item is stored and shown; its nouns, id prefix and bodies are its registry entry's. */
export interface WorkItemSpec<T extends WorkItemTypes> {
  entity: new () => T['row'];
  /** The built-in object: whose custom fields the rows keep, and the name its lists and their cursors carry. */
  object: 'activities' | 'tasks';
  /** What list queries call a row. */
  alias: string;
  /** What a PATCH may change. */
  fields: FieldSpec<T['row']>[];
  present: (row: T['row']) => T['view'];
  presentSummary: (row: T['row']) => T['summary'];
  /** An update's event data carries its change set: changed fields with their values before and after. */
  eventData: (row: T['row'], changes?: ChangeSet) => T['event'];
  /** The list's filters: query parameters each naming the column it must equal. */
  filters: ReadonlyArray<keyof T['list'] & string>;
}

interface WorkItemKind<T extends WorkItemTypes> extends WorkItemSpec<T> {
  /** As a 404 names it. */
  noun: string;
  prefix: IdPrefix;
  /** The body classes of its create and update, which a batch validates each item with. */
  createBody: new () => T['create'] & object;
  updateBody: new () => T['update'] & object;
  events: { created: WorkItemEvent; updated: WorkItemEvent; deleted: WorkItemEvent };
}

function describedKind<T extends WorkItemTypes>(spec: WorkItemSpec<T>): WorkItemKind<T> {
  const { one, prefix, create, update } = builtInEntry(spec.object)!;
  const on = (what: string) => `${one}.${what}` as WorkItemEvent;
  return {
    ...spec,
    noun: one,
    prefix,
    createBody: create as WorkItemKind<T>['createBody'],
    updateBody: update as WorkItemKind<T>['updateBody'],
    events: { created: on('created'), updated: on('updated'), deleted: on('deleted') },
  };
}

/** What every kind of work item is built from, injected once for all of them. */
@Injectable()
export class WorkItemDependencies {
  constructor(
    readonly dataSource: DataSource,
    readonly outbox: OutboxService,
    readonly deals: DealDirectory,
    readonly customFields: BuiltInCustomFieldsService,
    readonly cursors: CursorCodec,
  ) {}
}

/**
 * Activities and tasks are written, listed and removed the same way: a contact named in a write must
 * exist (and stays until the write commits), a deal is asked of the deals service first, and every
 * change records its event in the same transaction. Each kind adds its own columns and list filters.
 */
export abstract class WorkItemsService<T extends WorkItemTypes> {
  /** The set-based writes of POST /<kind>/batch, with the rules of the single writes below. */
  readonly batchWriter: RecordBatchWriter<T['row'], T['create'] & object, T['update'] & object, T['view'], T['view']>;
  private readonly kind: WorkItemKind<T>;

  protected readonly dataSource: DataSource;
  private readonly outbox: OutboxService;
  private readonly deals: DealDirectory;
  private readonly customFields: BuiltInCustomFieldsService;
  private readonly cursors: CursorCodec;

  protected constructor(dependencies: WorkItemDependencies, spec: WorkItemSpec<T>) {
    ({ dataSource: this.dataSource, outbox: this.outbox, deals: this.deals, customFields: this.customFields, cursors: this.cursors } = dependencies);
    this.kind = describedKind(spec);
    this.batchWriter = new RecordBatchWriter(this.batchTable(), this.customFields, this.deals);
  }

  private batchTable(): RecordTable<T['row'], T['create'] & object, T['update'] & object, T['view'], T['view']> {
    const { kind } = this;
    // Column values a single write leaves to SQL (NOW_MS) are the batch transaction's own time.
    const at = (now: Date, values: object) =>
      Object.fromEntries(Object.entries(values).map(([k, v]) => [k, typeof v === 'function' ? now : v])) as Partial<T['row']>;
    return {
      entity: kind.entity,
      table: kind.object,
      noun: kind.noun,
      prefix: kind.prefix,
      object: kind.object,
      createBody: kind.createBody,
      updateBody: kind.updateBody,
      fields: kind.fields,
      references: [
        { field: 'contact_id', table: 'contacts', noun: 'contact' },
        { field: 'deal_id', table: 'deals', noun: 'deal' },
        ...(kind.fields.some((f) => f.api === 'owner_id') ? [{ field: 'owner_id', table: 'users' as const, noun: 'user' }] : []),
      ],
      newRow: (dto, now) => ({ ...at(now, this.newColumns(dto)), contactId: dto.contact_id ?? null, dealId: dto.deal_id ?? null }) as Partial<T['row']>,
      derived: (_row, set, now) => at(now, this.updatedColumns(set)),
      created: (row) => event(kind.events.created, kind.eventData(row)),
      updated: (row, changes) => event(kind.events.updated, kind.eventData(row, changes)),
      deleted: (row) => event(kind.events.deleted, kind.eventData(row)),
      changeView: (row) => kind.present(row),
      presentCreated: async (_m, rows) => rows.map(kind.present),
      presentUpdated: async (_m, rows) => rows.map(kind.present),
    };
  }

  /** The columns of a new row that belong to this kind alone. */
  protected abstract newColumns(dto: T['create']): QueryDeepPartialEntity<T['row']>;

  /** What an update writes for the changed fields; a kind may derive further columns from them. */
  protected updatedColumns(set: Partial<T['row']>): QueryDeepPartialEntity<T['row']> {
    return { ...set, updatedAt: () => NOW_MS } as QueryDeepPartialEntity<T['row']>;
  }

  async create(ctx: RequestContext, dto: T['create']): Promise<T['view']> {
    if (dto.deal_id) await this.deals.requireDeal(ctx, dto.deal_id);
    const id = newId(this.kind.prefix);
    const own = this.newColumns(dto);
    try {
      return this.kind.present(
        await this.dataSource.transaction(async (m) => {
          if (dto.contact_id) await requireContact(m, dto.contact_id);
          const customFields = await this.customFields.values(m, ctx, this.kind.object, id, dto.custom_fields);
          const row = await insertReturning(m, this.kind.entity, {
            id,
            ...own,
            contactId: dto.contact_id ?? null,
            dealId: dto.deal_id ?? null,
            metadata: dto.metadata ?? {},
            customFields,
          } as QueryDeepPartialEntity<T['row']>);
          await this.outbox.record(m, {
            events: [event(this.kind.events.created, this.kind.eventData(row))],
            changes: [createdChange(this.kind.object, id, this.kind.present(row))],
          });
          return row;
        }),
      );
    } catch (err) {
      throw this.translateWriteError(err, dto.contact_id);
    }
  }

  /** GET /activities and /tasks, with the kind's filters. */
  async list(query: T['list']): Promise<Page<T['view']>> {
    const { qb, read } = this.page(this.kind.object, query);
    for (const filter of this.kind.filters) {
      const value = (query as Record<string, unknown>)[filter];
      if (value) qb.andWhere(`${this.kind.alias}.${filter} = :${filter}`, { [filter]: value });
    }
    return read(this.kind.present);
  }

  /** GET /contacts/:id/activities and /tasks: 404 for an unknown contact rather than an empty list. */
  async listForContact(contactId: string, query: SortablePageQuery): Promise<Page<T['summary']>> {
    if (!isId(contactId, IdPrefix.Contact) || !(await this.dataSource.query(`SELECT 1 FROM contacts WHERE id = $1`, [contactId])).length) {
      throw DomainError.notFound('contact', contactId);
    }
    const { qb, read } = this.page(`contact-${this.kind.object}`, query);
    qb.andWhere(`${this.kind.alias}.contact_id = :contactId`, { contactId });
    return read(this.kind.presentSummary);
  }

  /** GET /deals/:id/activities and /tasks: the deal is looked up in the deals service. */
  async listForDeal(ctx: RequestContext, dealId: string, query: SortablePageQuery): Promise<Page<T['summary']>> {
    const { qb, read } = this.page(`deal-${this.kind.object}`, query);
    qb.andWhere(`${this.kind.alias}.deal_id = :dealId`, { dealId });
    if (!isId(dealId, IdPrefix.Deal) || !(await this.deals.exists(ctx, dealId))) throw DomainError.notFound('deal', dealId);
    return read(this.kind.presentSummary);
  }

  async get(id: string): Promise<T['view']> {
    return this.kind.present(await this.find(this.dataSource.manager, id));
  }

  async update(ctx: RequestContext, id: string, dto: T['update']): Promise<T['view']> {
    if (!isId(id, this.kind.prefix)) throw DomainError.notFound(this.kind.noun, id);
    if (dto.deal_id) await this.deals.requireDeal(ctx, dto.deal_id);
    try {
      return this.kind.present(
        await this.dataSource.transaction(async (m) => {
          if (dto.custom_fields !== undefined) await this.customFields.lockDefinitions(m, this.kind.object);
          const row = await this.find(m, id, true);
          const input: Record<string, unknown> = { ...(dto as Record<string, unknown>) };
          input.custom_fields = await this.customFields.values(m, ctx, this.kind.object, id, dto.custom_fields, row.customFields ?? {});
          const { set, changes } = diffFields(row, input, this.kind.fields);
          if (!changes.changed.length) return row;
          if (set.contactId) await requireContact(m, set.contactId);
          const updated = await updateReturning(m, this.kind.entity, id, this.updatedColumns(set));
          await this.outbox.record(m, {
            events: [event(this.kind.events.updated, this.kind.eventData(updated, changes))],
            changes: [updatedChange(this.kind.object, id, changes)],
          });
          return updated;
        }),
      );
    } catch (err) {
      throw this.translateWriteError(err, dto.contact_id ?? undefined);
    }
  }

  async remove(id: string): Promise<void> {
    if (!isId(id, this.kind.prefix)) throw DomainError.notFound(this.kind.noun, id);
    await this.dataSource.transaction(async (m) => {
      const row = await this.find(m, id, true);
      await m.delete(this.kind.entity, { id });
      await this.outbox.record(m, {
        events: [event(this.kind.events.deleted, this.kind.eventData(row))],
        changes: [deletedChange(this.kind.object, id, this.kind.present(row))],
      });
    });
  }

  /** A page of `list`, checked against its cursor before anything else is read. */
  protected page(list: string, query: SortablePageQuery): KeysetPage<T['row']> {
    return keysetPage(this.cursors, this.dataSource.getRepository(this.kind.entity), this.kind.alias, list, query);
  }

  private async find(m: EntityManager, id: string, lock = false): Promise<T['row']> {
    if (!isId(id, this.kind.prefix)) throw DomainError.notFound(this.kind.noun, id);
    const row = await findById(m, this.kind.entity, id, lock);
    if (!row) throw DomainError.notFound(this.kind.noun, id);
    return row;
  }

  private translateWriteError(err: unknown, contactId: string | null | undefined): unknown {
    // The contact was deleted between the check and the write.
    if (isForeignKeyViolation(err) && contactId) return DomainError.invalid('contact_id', `No contact with id '${contactId}'.`, 'not_found');
    return err;
  }
}
