import { Module } from '@nestjs/common';
import { DealDirectory } from '../shared/references';
import { TasksController } from './tasks.controller';
import { TasksService } from './tasks.service';

@Module({ controllers: [TasksController], providers: [TasksService, DealDirectory] })
export class TasksModule {}
