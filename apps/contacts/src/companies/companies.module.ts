import { Module } from '@nestjs/common';
import { ContactCompaniesModule } from '../contact-companies/contact-companies.module';
import { DealDirectory } from '@crm/records';
import { CompaniesBatchWriter } from './companies.batch';
import { ObjectsModule } from '../objects/objects.module';
import { CompaniesController } from './companies.controller';
import { CompaniesService } from './companies.service';

@Module({
  imports: [ObjectsModule, ContactCompaniesModule],
  controllers: [CompaniesController],
  providers: [CompaniesService, CompaniesBatchWriter, DealDirectory],
  exports: [CompaniesService],
})
export class CompaniesModule {}
