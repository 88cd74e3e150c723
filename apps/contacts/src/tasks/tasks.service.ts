import { decodeCursor, diffFields, DomainError, FieldSpec, findById, IdPrefix, insertReturning, isForeignKeyViolation, isId, newId, Page, PageQuery, pageSize, toPage, updateReturning } from '@crm/common';
import { CreateTaskDto, EventType, ListTasksQuery, RequestContext, TaskEventData, TaskSummaryView, TaskView, UpdateTaskDto } from '@crm/contracts';
import { OutboxService } from '@crm/messaging';
import { BuiltInCustomFieldsService } from '@crm/runtime';
import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { QueryDeepPartialEntity } from 'typeorm/query-builder/QueryPartialEntity';
import { NOW_MS } from '../shared/sql';
import { DealDirectory, requireContact } from '../shared/references';
import { Task } from './task.entity';
import { presentTask, presentTaskSummary, taskEventData } from './task.presenter';

const TASK_FIELDS: FieldSpec<Task>[] = [
  { api: 'title', prop: 'title', kind: 'value' },
  { api: 'description', prop: 'description', kind: 'value' },
  { api: 'priority', prop: 'priority', kind: 'value' },
  { api: 'status', prop: 'status', kind: 'value' },
  { api: 'due_at', prop: 'dueAt', kind: 'date' },
  { api: 'contact_id', prop: 'contactId', kind: 'value' },
  { api: 'deal_id', prop: 'dealId', kind: 'value' },
  { api: 'owner_id', prop: 'ownerId', kind: 'value' },
  { api: 'metadata', prop: 'metadata', kind: 'json' },
  { api: 'custom_fields', prop: 'customFields', kind: 'json' },
];

@Injectable()
export class TasksService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly outbox: OutboxService,
    private readonly deals: DealDirectory,
    private readonly customFields: BuiltInCustomFieldsService,
  ) {}

  async create(ctx: RequestContext, dto: CreateTaskDto): Promise<TaskView> {
    if (dto.deal_id) await this.deals.requireDeal(ctx, dto.deal_id);
    const id = newId(IdPrefix.Task);
    const status = dto.status ?? 'pending';
    try {
      return presentTask(
        await this.dataSource.transaction(async (m) => {
          if (dto.contact_id) await requireContact(m, dto.contact_id);
          const customFields = await this.customFields.values(m, ctx, 'tasks', id, dto.custom_fields);
          const task = await insertReturning(m, Task, {
            id,
            title: dto.title,
            description: dto.description ?? null,
            priority: dto.priority ?? 'medium',
            status,
            dueAt: dto.due_at ? new Date(dto.due_at) : null,
            completedAt: status === 'completed' ? () => NOW_MS : null,
            contactId: dto.contact_id ?? null,
            dealId: dto.deal_id ?? null,
            ownerId: dto.owner_id ?? null,
            metadata: dto.metadata ?? {},
            customFields,
          } as QueryDeepPartialEntity<Task>);
          await this.outbox.append<TaskEventData>(m, EventType.TaskCreated, taskEventData(task));
          return task;
        }),
      );
    } catch (err) {
      throw this.translateWriteError(err, dto.contact_id);
    }
  }

  async list(query: ListTasksQuery): Promise<Page<TaskView>> {
    const qb = this.page('tasks', query);
    if (query.status) qb.andWhere('t.status = :status', { status: query.status });
    if (query.priority) qb.andWhere('t.priority = :priority', { priority: query.priority });
    if (query.contact_id) qb.andWhere('t.contact_id = :contactId', { contactId: query.contact_id });
    if (query.deal_id) qb.andWhere('t.deal_id = :dealId', { dealId: query.deal_id });
    if (query.owner_id) qb.andWhere('t.owner_id = :ownerId', { ownerId: query.owner_id });
    return toPage('tasks', await qb.getMany(), pageSize(query), (t) => t.id, presentTask);
  }

  /** GET /contacts/:id/tasks: 404 for an unknown contact rather than an empty list. */
  async listForContact(contactId: string, query: PageQuery): Promise<Page<TaskSummaryView>> {
    if (!isId(contactId, IdPrefix.Contact) || !(await this.dataSource.query(`SELECT 1 FROM contacts WHERE id = $1`, [contactId])).length) {
      throw DomainError.notFound('contact', contactId);
    }
    const qb = this.page('contact-tasks', query).andWhere('t.contact_id = :contactId', { contactId });
    return toPage('contact-tasks', await qb.getMany(), pageSize(query), (t) => t.id, presentTaskSummary);
  }

  /** GET /deals/:id/tasks: the deal is looked up in the deals service. */
  async listForDeal(ctx: RequestContext, dealId: string, query: PageQuery): Promise<Page<TaskSummaryView>> {
    const qb = this.page('deal-tasks', query).andWhere('t.deal_id = :dealId', { dealId });
    if (!isId(dealId, IdPrefix.Deal) || !(await this.deals.exists(ctx, dealId))) throw DomainError.notFound('deal', dealId);
    return toPage('deal-tasks', await qb.getMany(), pageSize(query), (t) => t.id, presentTaskSummary);
  }

  async get(id: string): Promise<TaskView> {
    return presentTask(await this.find(this.dataSource.manager, id));
  }

  async update(ctx: RequestContext, id: string, dto: UpdateTaskDto): Promise<TaskView> {
    if (!isId(id, IdPrefix.Task)) throw DomainError.notFound('task', id);
    if (dto.deal_id) await this.deals.requireDeal(ctx, dto.deal_id);
    try {
      return presentTask(
        await this.dataSource.transaction(async (m) => {
          if (dto.custom_fields !== undefined) await this.customFields.lockDefinitions(m, 'tasks');
          const task = await this.find(m, id, true);
          const input: Record<string, unknown> = { ...dto };
          input.custom_fields = await this.customFields.values(m, ctx, 'tasks', id, dto.custom_fields, task.customFields ?? {});
          const { set, changes } = diffFields(task, input, TASK_FIELDS);
          if (!changes.changed.length) return task;
          if (set.contactId) await requireContact(m, set.contactId);
          const values: QueryDeepPartialEntity<Task> = { ...set, updatedAt: () => NOW_MS } as QueryDeepPartialEntity<Task>;
          // completed_at records when the task was last completed; leaving that status clears it.
          if (set.status === 'completed') values.completedAt = () => NOW_MS;
          else if (set.status !== undefined) values.completedAt = null;
          const updated = await updateReturning(m, Task, id, values);
          await this.outbox.append<TaskEventData>(m, EventType.TaskUpdated, taskEventData(updated, changes.changed));
          return updated;
        }),
      );
    } catch (err) {
      throw this.translateWriteError(err, dto.contact_id ?? undefined);
    }
  }

  async remove(id: string): Promise<void> {
    if (!isId(id, IdPrefix.Task)) throw DomainError.notFound('task', id);
    await this.dataSource.transaction(async (m) => {
      const task = await this.find(m, id, true);
      await m.delete(Task, { id });
      await this.outbox.append<TaskEventData>(m, EventType.TaskDeleted, taskEventData(task));
    });
  }

  private page(list: string, query: PageQuery) {
    const after = decodeCursor<string>(list, query.cursor, 'string');
    const qb = this.dataSource.getRepository(Task).createQueryBuilder('t').orderBy('t.id', 'ASC').limit(pageSize(query) + 1);
    if (after) qb.andWhere('t.id > :after', { after });
    return qb;
  }

  private async find(m: EntityManager, id: string, lock = false): Promise<Task> {
    if (!isId(id, IdPrefix.Task)) throw DomainError.notFound('task', id);
    const task = await findById(m, Task, id, lock);
    if (!task) throw DomainError.notFound('task', id);
    return task;
  }

  private translateWriteError(err: unknown, contactId: string | null | undefined): unknown {
    if (isForeignKeyViolation(err) && contactId) return DomainError.invalid('contact_id', `No contact with id '${contactId}'.`, 'not_found');
    return err;
  }
}
