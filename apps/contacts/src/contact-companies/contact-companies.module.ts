import { Module } from '@nestjs/common';
import { ContactCompanies } from './contact-companies';
import { ContactCompaniesController } from './contact-companies.controller';

@Module({ controllers: [ContactCompaniesController], providers: [ContactCompanies], exports: [ContactCompanies] })
export class ContactCompaniesModule {}
