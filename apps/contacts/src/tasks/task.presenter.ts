import type { ChangeSet } from '@crm/common';
import type { TaskEventData, TaskSummaryView, TaskView } from '@crm/contracts';
import { iso } from '@crm/records';
import { Task } from './task.entity';

export function presentTaskSummary(task: Task): TaskSummaryView {
  return {
    id: task.id,
    title: task.title,
    priority: task.priority,
    status: task.status,
    due_at: iso(task.dueAt),
    created_at: task.createdAt.toISOString(),
    updated_at: task.updatedAt.toISOString(),
  };
}

export function presentTask(task: Task): TaskView {
  return {
    id: task.id,
    title: task.title,
    description: task.description,
    priority: task.priority,
    status: task.status,
    due_at: iso(task.dueAt),
    completed_at: iso(task.completedAt),
    contact_id: task.contactId,
    deal_id: task.dealId,
    owner_id: task.ownerId,
    metadata: task.metadata ?? {},
    custom_fields: task.customFields ?? {},
    created_at: task.createdAt.toISOString(),
    updated_at: task.updatedAt.toISOString(),
  };
}

/** The data of a task event; an update's carries what it changed (`changes`). */
export function taskEventData(task: Pick<Task, 'id' | 'status' | 'contactId' | 'dealId'>, changes?: ChangeSet): TaskEventData {
  return {
    task_id: task.id,
    status: task.status,
    contact_id: task.contactId,
    deal_id: task.dealId,
    ...(changes ? { changed: changes.changed, previous: changes.previous, current: changes.current } : {}),
  };
}
