import { Module } from '@nestjs/common';
import { ObjectsModule } from '../objects/objects.module';
import { CompaniesController } from './companies.controller';
import { CompaniesService } from './companies.service';

@Module({ imports: [ObjectsModule], controllers: [CompaniesController], providers: [CompaniesService], exports: [CompaniesService] })
export class CompaniesModule {}
