import { returnedRows } from '@crm/common';
import { ActivityEventData, EventType, TaskEventData } from '@crm/contracts';
import { OutboxService } from '@crm/messaging';
import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { activityEventData } from '../activities/activity.presenter';
import { NOW_MS } from '../shared/sql';
import { taskEventData } from '../tasks/task.presenter';

interface ActivityRow {
  id: string;
  type: string;
  contact_id: string | null;
  deal_id: string | null;
  occurred_at: Date;
}

interface TaskRow {
  id: string;
  status: string;
  contact_id: string | null;
  deal_id: string | null;
}

const toActivity = (r: ActivityRow) => ({ id: r.id, type: r.type, contactId: r.contact_id, dealId: r.deal_id, occurredAt: new Date(r.occurred_at) });
const toTask = (r: TaskRow) => ({ id: r.id, status: r.status, contactId: r.contact_id, dealId: r.deal_id });

/**
 * Detaches work from a record that is going away, the same way for contacts and deals: what is shared
 * with the other side stays there and loses the link, what belonged to the removed record alone goes
 * with it. Each row changed emits its event. Running it twice changes nothing the second time.
 */
@Injectable()
export class WorkLinks {
  constructor(private readonly outbox: OutboxService) {}

  async detach(m: EntityManager, link: 'contact_id' | 'deal_id', id: string): Promise<void> {
    const other = link === 'contact_id' ? 'deal_id' : 'contact_id';
    const activityColumns = 'id, type, contact_id, deal_id, occurred_at';
    const taskColumns = 'id, status, contact_id, deal_id';

    const deletedActivities = returnedRows<ActivityRow>(
      await m.query(`DELETE FROM activities WHERE ${link} = $1 AND ${other} IS NULL RETURNING ${activityColumns}`, [id]),
    );
    for (const row of deletedActivities) await this.outbox.append<ActivityEventData>(m, EventType.ActivityDeleted, activityEventData(toActivity(row)));
    const unlinkedActivities = returnedRows<ActivityRow>(
      await m.query(`UPDATE activities SET ${link} = NULL, updated_at = ${NOW_MS} WHERE ${link} = $1 RETURNING ${activityColumns}`, [id]),
    );
    for (const row of unlinkedActivities) {
      await this.outbox.append<ActivityEventData>(m, EventType.ActivityUpdated, activityEventData(toActivity(row), [link]));
    }

    const deletedTasks = returnedRows<TaskRow>(await m.query(`DELETE FROM tasks WHERE ${link} = $1 AND ${other} IS NULL RETURNING ${taskColumns}`, [id]));
    for (const row of deletedTasks) await this.outbox.append<TaskEventData>(m, EventType.TaskDeleted, taskEventData(toTask(row)));
    const unlinkedTasks = returnedRows<TaskRow>(
      await m.query(`UPDATE tasks SET ${link} = NULL, updated_at = ${NOW_MS} WHERE ${link} = $1 RETURNING ${taskColumns}`, [id]),
    );
    for (const row of unlinkedTasks) await this.outbox.append<TaskEventData>(m, EventType.TaskUpdated, taskEventData(toTask(row), [link]));
  }

  /** Merge: every activity and task of one contact now belongs to another. */
  async move(m: EntityManager, fromContactId: string, toContactId: string): Promise<void> {
    const activities = returnedRows<ActivityRow>(
      await m.query(`UPDATE activities SET contact_id = $2, updated_at = ${NOW_MS} WHERE contact_id = $1 RETURNING id, type, contact_id, deal_id, occurred_at`, [
        fromContactId,
        toContactId,
      ]),
    );
    for (const row of activities) await this.outbox.append<ActivityEventData>(m, EventType.ActivityUpdated, activityEventData(toActivity(row), ['contact_id']));
    const tasks = returnedRows<TaskRow>(
      await m.query(`UPDATE tasks SET contact_id = $2, updated_at = ${NOW_MS} WHERE contact_id = $1 RETURNING id, status, contact_id, deal_id`, [
        fromContactId,
        toContactId,
      ]),
    );
    for (const row of tasks) await this.outbox.append<TaskEventData>(m, EventType.TaskUpdated, taskEventData(toTask(row), ['contact_id']));
  }
}
