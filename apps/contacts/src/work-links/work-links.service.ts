import { ChangeSet, hydrate, returnedRows } from '@crm/common';
import { event, EventDraft, EventType } from '@crm/contracts';
import { deletedChange, OutboxService, updatedChange } from '@crm/messaging';
import { BatchRecording, NOW_MS } from '@crm/records';
import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { Activity } from '../activities/activity.entity';
import { activityEventData, presentActivity } from '../activities/activity.presenter';
import { Task } from '../tasks/task.entity';
import { presentTask, taskEventData } from '../tasks/task.presenter';

type Row = Record<string, unknown>;

/** One link of a work item set from `from` to `to`: the change set its event and change entry carry. */
function linkChange(link: 'contact_id' | 'deal_id', from: string | null, to: string | null): ChangeSet {
  return { changed: [link], previous: { [link]: from }, current: { [link]: to } };
}

/**
 * Detaches work from a record that is going away, the same way for contacts and deals: what is shared
 * with the other side stays there and loses the link, what belonged to the removed record alone goes
 * with it. Each row changed records its event and change entry. Running it twice changes nothing the
 * second time.
 */
@Injectable()
export class WorkLinks {
  constructor(private readonly outbox: OutboxService) {}

  async detach(m: EntityManager, link: 'contact_id' | 'deal_id', id: string): Promise<void> {
    const recording = (await this.detachAll(m, link, [id])).get(id);
    if (recording) await this.outbox.record(m, recording);
  }

  /**
   * `detach` for many records at once (a batch delete), with four statements whatever their number. Returns
   * the events and change entries to record, by the id of the record going away, in the order `detach`
   * records them.
   */
  async detachAll(m: EntityManager, link: 'contact_id' | 'deal_id', ids: string[]): Promise<Map<string, BatchRecording>> {
    const other = link === 'contact_id' ? 'deal_id' : 'contact_id';
    const linkProp = link === 'contact_id' ? 'contactId' : 'dealId';
    const recordings = new Map<string, BatchRecording>();
    const add = (id: string, event: EventDraft, change: BatchRecording['changes'][number]) => {
      const recording = recordings.get(id) ?? { events: [], changes: [] };
      recording.events.push(event);
      recording.changes.push(change);
      recordings.set(id, recording);
    };
    const unlinked = (table: string) =>
      `UPDATE ${table} t SET ${link} = NULL, updated_at = ${NOW_MS}
         FROM (SELECT id, ${link} AS was FROM ${table} WHERE ${link} = ANY($1::text[]) FOR UPDATE) o
        WHERE t.id = o.id RETURNING t.*, o.was`;
    const deleted = (table: string) => `DELETE FROM ${table} WHERE ${link} = ANY($1::text[]) AND ${other} IS NULL RETURNING *`;

    for (const raw of returnedRows<Row>(await m.query(deleted('activities'), [ids]))) {
      const row = hydrate(m, Activity, raw);
      add(row[linkProp]!, event(EventType.ActivityDeleted, activityEventData(row)), deletedChange('activities', row.id, presentActivity(row)));
    }
    for (const raw of returnedRows<Row & { was: string }>(await m.query(unlinked('activities'), [ids]))) {
      const row = hydrate(m, Activity, raw);
      const changes = linkChange(link, raw.was, null);
      add(raw.was, event(EventType.ActivityUpdated, activityEventData(row, changes)), updatedChange('activities', row.id, changes)!);
    }
    for (const raw of returnedRows<Row>(await m.query(deleted('tasks'), [ids]))) {
      const row = hydrate(m, Task, raw);
      add(row[linkProp]!, event(EventType.TaskDeleted, taskEventData(row)), deletedChange('tasks', row.id, presentTask(row)));
    }
    for (const raw of returnedRows<Row & { was: string }>(await m.query(unlinked('tasks'), [ids]))) {
      const row = hydrate(m, Task, raw);
      const changes = linkChange(link, raw.was, null);
      add(raw.was, event(EventType.TaskUpdated, taskEventData(row, changes)), updatedChange('tasks', row.id, changes)!);
    }
    return recordings;
  }

  /** Merge: every activity and task of one contact now belongs to another. */
  async move(m: EntityManager, fromContactId: string, toContactId: string): Promise<void> {
    const moved = (table: string) => `UPDATE ${table} SET contact_id = $2, updated_at = ${NOW_MS} WHERE contact_id = $1 RETURNING *`;
    const changes = linkChange('contact_id', fromContactId, toContactId);
    const activities = returnedRows<Row>(await m.query(moved('activities'), [fromContactId, toContactId])).map((raw) => hydrate(m, Activity, raw));
    const tasks = returnedRows<Row>(await m.query(moved('tasks'), [fromContactId, toContactId])).map((raw) => hydrate(m, Task, raw));
    await this.outbox.record(m, {
      events: [
        ...activities.map((row) => event(EventType.ActivityUpdated, activityEventData(row, changes))),
        ...tasks.map((row) => event(EventType.TaskUpdated, taskEventData(row, changes))),
      ],
      changes: [...activities.map((row) => updatedChange('activities', row.id, changes)), ...tasks.map((row) => updatedChange('tasks', row.id, changes))],
    });
  }
}
