import { FieldSpec, fieldSpecs } from '@crm/common';
import { ActivityEventData, ActivitySummaryView, ActivityView, CreateActivityDto, ListActivitiesQuery, UpdateActivityDto } from '@crm/contracts';
import { Injectable } from '@nestjs/common';
import { QueryDeepPartialEntity } from 'typeorm/query-builder/QueryPartialEntity';
import { BUILT_IN_RECORD_FIELDS, NOW_MS } from '@crm/records';
import { WorkItemDependencies, WorkItemsService, WorkItemSpec } from '../shared/work-items.service';
import { Activity } from './activity.entity';
import { activityEventData, presentActivity, presentActivitySummary } from './activity.presenter';

const ACTIVITY_FIELDS: FieldSpec<Activity>[] = [
  ...fieldSpecs<Activity>({
    type: 'value',
    status: 'value',
    subject: 'value',
    body: 'value',
    occurred_at: 'date',
    contact_id: 'value',
    deal_id: 'value',
  }),
  ...BUILT_IN_RECORD_FIELDS,
];

interface ActivityTypes {
  row: Activity;
  create: CreateActivityDto;
  update: UpdateActivityDto;
  view: ActivityView;
  summary: ActivitySummaryView;
  event: ActivityEventData;
  list: ListActivitiesQuery;
}

const ACTIVITY_ITEMS: WorkItemSpec<ActivityTypes> = {
  entity: Activity,
  object: 'activities',
  alias: 'a',
  fields: ACTIVITY_FIELDS,
  present: presentActivity,
  presentSummary: presentActivitySummary,
  eventData: activityEventData,
  filters: ['type', 'status', 'contact_id', 'deal_id'],
};

@Injectable()
export class ActivitiesService extends WorkItemsService<ActivityTypes> {
  constructor(dependencies: WorkItemDependencies) {
    super(dependencies, ACTIVITY_ITEMS);
  }

  /** An activity logged without a time happened now; one logged without a status is done. */
  protected newColumns(dto: CreateActivityDto): QueryDeepPartialEntity<Activity> {
    return {
      type: dto.type,
      status: dto.status ?? 'completed',
      subject: dto.subject ?? null,
      body: dto.body ?? null,
      occurredAt: dto.occurred_at ? new Date(dto.occurred_at) : () => NOW_MS,
    };
  }
}
