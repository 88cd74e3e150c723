import { FieldSpec, fieldSpecs } from '@crm/common';
import { CreateTaskDto, ListTasksQuery, TaskEventData, TaskSummaryView, TaskView, UpdateTaskDto } from '@crm/contracts';
import { Injectable } from '@nestjs/common';
import { QueryDeepPartialEntity } from 'typeorm/query-builder/QueryPartialEntity';
import { BUILT_IN_RECORD_FIELDS, NOW_MS } from '@crm/records';
import { WorkItemDependencies, WorkItemsService, WorkItemSpec } from '../shared/work-items.service';
import { Task } from './task.entity';
import { presentTask, presentTaskSummary, taskEventData } from './task.presenter';

const TASK_FIELDS: FieldSpec<Task>[] = [
  ...fieldSpecs<Task>({
    title: 'value',
    description: 'value',
    priority: 'value',
    status: 'value',
    due_at: 'date',
    contact_id: 'value',
    deal_id: 'value',
    owner_id: 'value',
  }),
  ...BUILT_IN_RECORD_FIELDS,
];

interface TaskTypes {
  row: Task;
  create: CreateTaskDto;
  update: UpdateTaskDto;
  view: TaskView;
  summary: TaskSummaryView;
  event: TaskEventData;
  list: ListTasksQuery;
}

const TASK_ITEMS: WorkItemSpec<TaskTypes> = {
  entity: Task,
  object: 'tasks',
  alias: 't',
  fields: TASK_FIELDS,
  present: presentTask,
  presentSummary: presentTaskSummary,
  eventData: taskEventData,
  filters: ['status', 'priority', 'contact_id', 'deal_id', 'owner_id'],
};

@Injectable()
export class TasksService extends WorkItemsService<TaskTypes> {
  constructor(dependencies: WorkItemDependencies) {
    super(dependencies, TASK_ITEMS);
  }

  /** A task is pending unless created with a status; one created completed was completed now. */
  protected newColumns(dto: CreateTaskDto): QueryDeepPartialEntity<Task> {
    const status = dto.status ?? 'pending';
    return {
      title: dto.title,
      description: dto.description ?? null,
      priority: dto.priority ?? 'medium',
      status,
      dueAt: dto.due_at ? new Date(dto.due_at) : null,
      completedAt: status === 'completed' ? () => NOW_MS : null,
      ownerId: dto.owner_id ?? null,
    };
  }

  /** completed_at records when the task was last completed; leaving that status clears it. */
  protected override updatedColumns(set: Partial<Task>): QueryDeepPartialEntity<Task> {
    const values = super.updatedColumns(set);
    if (set.status === 'completed') values.completedAt = () => NOW_MS;
    else if (set.status !== undefined) values.completedAt = null;
    return values;
  }
}
