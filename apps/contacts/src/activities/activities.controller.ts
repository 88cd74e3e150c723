import { Ops } from '@crm/contracts';
import { workItemsController } from '../shared/work-items.controller';
import { ActivitiesService } from './activities.service';

export class ActivitiesController extends workItemsController(ActivitiesService, {
  ...Ops.activities,
  forContact: Ops.contacts.activities,
  forDeal: Ops.deals.activities,
}) {}
