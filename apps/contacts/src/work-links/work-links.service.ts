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
    await this.outbox.appendMany(m, (await this.detachAll(m, link, [id])).get(id) ?? []);
  }

  /**
   * `detach` for many records at once (a batch delete), with four statements whatever their number. Returns
   * the events to record, by the id of the record going away, in the order `detach` records them.
   */
  async detachAll(m: EntityManager, link: 'contact_id' | 'deal_id', ids: string[]): Promise<Map<string, Array<{ type: EventType; data: object }>>> {
    const other = link === 'contact_id' ? 'deal_id' : 'contact_id';
    const events = new Map<string, Array<{ type: EventType; data: object }>>();
    const add = (id: string, type: EventType, data: object) => events.set(id, [...(events.get(id) ?? []), { type, data }]);
    const unlinked = (table: string, columns: string) =>
      `UPDATE ${table} t SET ${link} = NULL, updated_at = ${NOW_MS}
         FROM (SELECT id, ${link} AS was FROM ${table} WHERE ${link} = ANY($1::text[]) FOR UPDATE) o
        WHERE t.id = o.id RETURNING ${columns.split(', ').map((c) => `t.${c}`).join(', ')}, o.was`;
    const activityColumns = 'id, type, contact_id, deal_id, occurred_at';
    const taskColumns = 'id, status, contact_id, deal_id';

    const deletedActivities = returnedRows<ActivityRow>(
      await m.query(`DELETE FROM activities WHERE ${link} = ANY($1::text[]) AND ${other} IS NULL RETURNING ${activityColumns}`, [ids]),
    );
    for (const row of deletedActivities) add(row[link]!, EventType.ActivityDeleted, activityEventData(toActivity(row)));
    const unlinkedActivities = returnedRows<ActivityRow & { was: string }>(await m.query(unlinked('activities', activityColumns), [ids]));
    for (const row of unlinkedActivities) add(row.was, EventType.ActivityUpdated, activityEventData(toActivity(row), [link]));

    const deletedTasks = returnedRows<TaskRow>(await m.query(`DELETE FROM tasks WHERE ${link} = ANY($1::text[]) AND ${other} IS NULL RETURNING ${taskColumns}`, [ids]));
    for (const row of deletedTasks) add(row[link]!, EventType.TaskDeleted, taskEventData(toTask(row)));
    const unlinkedTasks = returnedRows<TaskRow & { was: string }>(await m.query(unlinked('tasks', taskColumns), [ids]));
    for (const row of unlinkedTasks) add(row.was, EventType.TaskUpdated, taskEventData(toTask(row), [link]));
    return events;
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
