import { Module } from '@nestjs/common';
import { ObjectsModule } from '../objects/objects.module';
import { DealDirectory } from '@crm/records';
import { TasksController } from './tasks.controller';
import { WorkItemDependencies } from '../shared/work-items.service';
import { TasksService } from './tasks.service';

@Module({ imports: [ObjectsModule], controllers: [TasksController], providers: [TasksService, WorkItemDependencies, DealDirectory] })
export class TasksModule {}
