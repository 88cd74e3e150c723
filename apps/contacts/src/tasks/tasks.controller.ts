import { Ops } from '@crm/contracts';
import { workItemsController } from '../shared/work-items.controller';
import { TasksService } from './tasks.service';

export class TasksController extends workItemsController(TasksService, { ...Ops.tasks, forContact: Ops.contacts.tasks, forDeal: Ops.deals.tasks }) {}
