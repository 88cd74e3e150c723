import { Module } from '@nestjs/common';
import { DealDirectory } from '../shared/references';
import { ActivitiesController } from './activities.controller';
import { ActivitiesService } from './activities.service';

@Module({ controllers: [ActivitiesController], providers: [ActivitiesService, DealDirectory] })
export class ActivitiesModule {}
