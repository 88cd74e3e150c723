import { Module } from '@nestjs/common';
import { ObjectsModule } from '../objects/objects.module';
import { DealDirectory } from '@crm/records';
import { ActivitiesController } from './activities.controller';
import { WorkItemDependencies } from '../shared/work-items.service';
import { ActivitiesService } from './activities.service';

@Module({ imports: [ObjectsModule], controllers: [ActivitiesController], providers: [ActivitiesService, WorkItemDependencies, DealDirectory] })
export class ActivitiesModule {}
