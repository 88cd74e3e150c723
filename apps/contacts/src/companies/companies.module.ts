import { Module } from '@nestjs/common';
import { CompaniesHandler } from './companies.handler';
import { CompaniesService } from './companies.service';

@Module({ providers: [CompaniesService, CompaniesHandler] })
export class CompaniesModule {}
