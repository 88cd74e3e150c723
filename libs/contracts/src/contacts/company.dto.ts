import { IsDefined, IsFQDN, IsOptional, IsString, MaxLength } from 'class-validator';
import { IfPresent, MetadataInput, NonEmptyText, Normalise, Text, Trim } from '../dto-helpers';
import { SortablePageQuery } from '../paging';
import { CustomFieldsInput } from '../schema/field-values';
import { SchemaField } from '../schema/schema-field';
import { SearchText } from './rules';
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
  @Text(ContactsLimits.industry)
  industry?: string | null;

  @MetadataInput()
  metadata?: Record<string, unknown> | null;

  /** Values of the custom fields defined on companies (POST /objects/companies/fields); PATCH merges by key. */
  @CustomFieldsInput()
  custom_fields?: Record<string, unknown> | null;
}

export class CreateCompanyDto extends CompanyFieldsDto {
  @IsDefined({ message: 'name is required' })
  @Trim()
  @NonEmptyText(ContactsLimits.companyName)
  name!: string;
}

export class UpdateCompanyDto extends CompanyFieldsDto {
  @IfPresent()
  @Trim()
  @NonEmptyText(ContactsLimits.companyName)
  name?: string;
}

export class ListCompaniesQuery extends SortablePageQuery {
  @IsOptional()
  @Normalise()
  @Text(ContactsLimits.domain)
  domain?: string;

  @IsOptional()
  @SearchText()
  search?: string;
}
