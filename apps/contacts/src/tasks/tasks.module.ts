import { Module } from '@nestjs/common';
import { DealDirectory } from '../shared/references';
import { TasksHandler } from './tasks.handler';
import { TasksService } from './tasks.service';

@Module({ providers: [TasksService, TasksHandler, DealDirectory] })
export class TasksModule {}
