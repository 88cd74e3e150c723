import { PageQuery } from '@crm/common';
import { IsDefined, IsFQDN, IsOptional, IsString, Length, Matches, MaxLength } from 'class-validator';
import { IfPresent, Normalise, Trim } from '../dto-helpers';
import { IsMetadata } from '@crm/common';
import { CustomFieldsInput } from '../schema/field-values';
import { SchemaField } from '../schema/schema-field';
import { ContactsLimits } from './values';

const DOMAIN_MESSAGE = 'domain must be a domain name such as example.com (no scheme or path)';

class CompanyFieldsDto {
  @IsOptional()
  @SchemaField({ unique: true })
  @Normalise()
  @IsString({ message: DOMAIN_MESSAGE })
  @MaxLength(ContactsLimits.domain, { message: `domain must be at most ${ContactsLimits.domain} characters` })
  @IsFQDN({}, { message: DOMAIN_MESSAGE })
  domain?: string | null;

  @IsOptional()
  @IsString({ message: 'industry must be a string' })
  @MaxLength(ContactsLimits.industry, { message: `industry must be at most ${ContactsLimits.industry} characters` })
  industry?: string | null;

  @IsOptional()
  @IsMetadata()
  metadata?: Record<string, unknown> | null;

  /** Values of the custom fields defined on companies (POST /objects/companies/fields); PATCH merges by key. */
  @CustomFieldsInput()
  custom_fields?: Record<string, unknown> | null;
}

export class CreateCompanyDto extends CompanyFieldsDto {
  @IsDefined({ message: 'name is required' })
  @Trim()
  @IsString({ message: 'name must be a string' })
  @Length(1, ContactsLimits.companyName, { message: `name must be 1 to ${ContactsLimits.companyName} characters` })
  name!: string;
}

export class UpdateCompanyDto extends CompanyFieldsDto {
  @IfPresent()
  @Trim()
  @IsString({ message: 'name must be a string' })
  @Length(1, ContactsLimits.companyName, { message: `name must be 1 to ${ContactsLimits.companyName} characters` })
  name?: string;
}

export class ListCompaniesQuery extends PageQuery {
  @IsOptional()
  @Normalise()
  @IsString({ message: 'domain must be a string' })
  @MaxLength(ContactsLimits.domain, { message: `domain must be at most ${ContactsLimits.domain} characters` })
  domain?: string;

  @IsOptional()
  @Trim()
  @IsString({ message: 'search must be a string' })
  @Matches(/^[^\u0000-\u001f]{1,200}$/, { message: `search must be 1 to ${ContactsLimits.search} characters without control characters` })
  search?: string;
}
