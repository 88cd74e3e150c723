import { Module } from '@nestjs/common';
import { DealDirectory } from '../shared/references';
import { ActivitiesHandler } from './activities.handler';
import { ActivitiesService } from './activities.service';

@Module({ providers: [ActivitiesService, ActivitiesHandler, DealDirectory] })
export class ActivitiesModule {}
