import { decodeCursor, diffFields, DomainError, FieldSpec, findById, IdPrefix, insertReturning, isForeignKeyViolation, isId, newId, Page, PageQuery, pageSize, toPage, updateReturning } from '@crm/common';
import {
  ActivityEventData,
  ActivitySummaryView,
  ActivityView,
  CreateActivityDto,
  EventType,
  ListActivitiesQuery,
  RequestContext,
  UpdateActivityDto,
} from '@crm/contracts';
import { OutboxService } from '@crm/messaging';
import { BuiltInCustomFieldsService } from '@crm/runtime';
import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { QueryDeepPartialEntity } from 'typeorm/query-builder/QueryPartialEntity';
import { NOW_MS } from '../shared/sql';
import { DealDirectory, requireContact } from '../shared/references';
import { Activity } from './activity.entity';
import { activityEventData, presentActivity, presentActivitySummary } from './activity.presenter';

const ACTIVITY_FIELDS: FieldSpec<Activity>[] = [
  { api: 'type', prop: 'type', kind: 'value' },
  { api: 'status', prop: 'status', kind: 'value' },
  { api: 'subject', prop: 'subject', kind: 'value' },
  { api: 'body', prop: 'body', kind: 'value' },
  { api: 'occurred_at', prop: 'occurredAt', kind: 'date' },
  { api: 'contact_id', prop: 'contactId', kind: 'value' },
  { api: 'deal_id', prop: 'dealId', kind: 'value' },
  { api: 'metadata', prop: 'metadata', kind: 'json' },
  { api: 'custom_fields', prop: 'customFields', kind: 'json' },
];

@Injectable()
export class ActivitiesService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly outbox: OutboxService,
    private readonly deals: DealDirectory,
    private readonly customFields: BuiltInCustomFieldsService,
  ) {}

  async create(ctx: RequestContext, dto: CreateActivityDto): Promise<ActivityView> {
    if (dto.deal_id) await this.deals.requireDeal(ctx, dto.deal_id);
    const id = newId(IdPrefix.Activity);
    try {
      return presentActivity(
        await this.dataSource.transaction(async (m) => {
          if (dto.contact_id) await requireContact(m, dto.contact_id);
          const customFields = await this.customFields.values(m, ctx, 'activities', id, dto.custom_fields);
          const activity = await insertReturning(m, Activity, {
            id,
            type: dto.type,
            status: dto.status ?? 'completed',
            subject: dto.subject ?? null,
            body: dto.body ?? null,
            occurredAt: dto.occurred_at ? new Date(dto.occurred_at) : () => NOW_MS,
            contactId: dto.contact_id ?? null,
            dealId: dto.deal_id ?? null,
            metadata: dto.metadata ?? {},
            customFields,
          } as QueryDeepPartialEntity<Activity>);
          await this.outbox.append<ActivityEventData>(m, EventType.ActivityCreated, activityEventData(activity));
          return activity;
        }),
      );
    } catch (err) {
      throw this.translateWriteError(err, dto.contact_id);
    }
  }

  async list(query: ListActivitiesQuery): Promise<Page<ActivityView>> {
    const qb = this.page('activities', query);
    if (query.type) qb.andWhere('a.type = :type', { type: query.type });
    if (query.status) qb.andWhere('a.status = :status', { status: query.status });
    if (query.contact_id) qb.andWhere('a.contact_id = :contactId', { contactId: query.contact_id });
    if (query.deal_id) qb.andWhere('a.deal_id = :dealId', { dealId: query.deal_id });
    return toPage('activities', await qb.getMany(), pageSize(query), (a) => a.id, presentActivity);
  }

  /** GET /contacts/:id/activities: 404 for an unknown contact rather than an empty list. */
  async listForContact(contactId: string, query: PageQuery): Promise<Page<ActivitySummaryView>> {
    if (!isId(contactId, IdPrefix.Contact) || !(await this.dataSource.query(`SELECT 1 FROM contacts WHERE id = $1`, [contactId])).length) {
      throw DomainError.notFound('contact', contactId);
    }
    const qb = this.page('contact-activities', query).andWhere('a.contact_id = :contactId', { contactId });
    return toPage('contact-activities', await qb.getMany(), pageSize(query), (a) => a.id, presentActivitySummary);
  }

  /** GET /deals/:id/activities: the deal is looked up in the deals service. */
  async listForDeal(ctx: RequestContext, dealId: string, query: PageQuery): Promise<Page<ActivitySummaryView>> {
    const qb = this.page('deal-activities', query).andWhere('a.deal_id = :dealId', { dealId });
    if (!isId(dealId, IdPrefix.Deal) || !(await this.deals.exists(ctx, dealId))) throw DomainError.notFound('deal', dealId);
    return toPage('deal-activities', await qb.getMany(), pageSize(query), (a) => a.id, presentActivitySummary);
  }

  async get(id: string): Promise<ActivityView> {
    return presentActivity(await this.find(this.dataSource.manager, id));
  }

  async update(ctx: RequestContext, id: string, dto: UpdateActivityDto): Promise<ActivityView> {
    if (!isId(id, IdPrefix.Activity)) throw DomainError.notFound('activity', id);
    if (dto.deal_id) await this.deals.requireDeal(ctx, dto.deal_id);
    try {
      return presentActivity(
        await this.dataSource.transaction(async (m) => {
          if (dto.custom_fields !== undefined) await this.customFields.lockDefinitions(m, 'activities');
          const activity = await this.find(m, id, true);
          const input: Record<string, unknown> = { ...dto };
          input.custom_fields = await this.customFields.values(m, ctx, 'activities', id, dto.custom_fields, activity.customFields ?? {});
          const { set, changes } = diffFields(activity, input, ACTIVITY_FIELDS);
          if (!changes.changed.length) return activity;
          if (set.contactId) await requireContact(m, set.contactId);
          const updated = await updateReturning(m, Activity, id, { ...set, updatedAt: () => NOW_MS } as QueryDeepPartialEntity<Activity>);
          await this.outbox.append<ActivityEventData>(m, EventType.ActivityUpdated, activityEventData(updated, changes.changed));
          return updated;
        }),
      );
    } catch (err) {
      throw this.translateWriteError(err, dto.contact_id ?? undefined);
    }
  }

  async remove(id: string): Promise<void> {
    if (!isId(id, IdPrefix.Activity)) throw DomainError.notFound('activity', id);
    await this.dataSource.transaction(async (m) => {
      const activity = await this.find(m, id, true);
      await m.delete(Activity, { id });
      await this.outbox.append<ActivityEventData>(m, EventType.ActivityDeleted, activityEventData(activity));
    });
  }

  private page(list: string, query: PageQuery) {
    const after = decodeCursor<string>(list, query.cursor, 'string');
    const qb = this.dataSource.getRepository(Activity).createQueryBuilder('a').orderBy('a.id', 'ASC').limit(pageSize(query) + 1);
    if (after) qb.andWhere('a.id > :after', { after });
    return qb;
  }

  private async find(m: EntityManager, id: string, lock = false): Promise<Activity> {
    if (!isId(id, IdPrefix.Activity)) throw DomainError.notFound('activity', id);
    const activity = await findById(m, Activity, id, lock);
    if (!activity) throw DomainError.notFound('activity', id);
    return activity;
  }

  private translateWriteError(err: unknown, contactId: string | null | undefined): unknown {
    // The contact was deleted between the check and the write.
    if (isForeignKeyViolation(err) && contactId) return DomainError.invalid('contact_id', `No contact with id '${contactId}'.`, 'not_found');
    return err;
  }
}
