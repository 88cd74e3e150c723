import { ArrayMaxSize, IsArray, IsDefined, IsInt, IsOptional, IsRFC3339, IsString, Matches, Max, Min } from 'class-validator';
import { CompanyLink, DateTimeFilter, IfPresent, IsIdOf, IsOneOf, MetadataInput, OwnerLink, Rules, Text } from '../dto-helpers';
import { SortablePageQuery, QueryInt } from '../paging';
import { CustomFieldsInput } from '../schema/field-values';
import { SchemaField } from '../schema/schema-field';
import { Email, SearchText } from './rules';
import { CONTACT_SOURCES, CONTACT_STAGES, ContactSource, ContactStage, ContactsLimits } from './values';

const PHONE = /^[0-9+().\-\s/xX#*]{3,50}$/;

const SCORE_MESSAGE = '$property must be an integer between 0 and 100';
/** An ICP score, or a bound of the scores a list keeps. */
const IcpScore = (): PropertyDecorator => Rules(IsInt({ message: SCORE_MESSAGE }), Min(0, { message: SCORE_MESSAGE }), Max(100, { message: SCORE_MESSAGE }));

/** The optional contact fields, shared by create and update; on update `null` clears a field. */
class ContactFieldsDto {
  @IsOptional()
  @Text(ContactsLimits.name)
  first_name?: string | null;

  @IsOptional()
  @Text(ContactsLimits.name)
  last_name?: string | null;

  @IsOptional()
  @SchemaField({ type: 'phone' })
  @IsString({ message: 'phone must be a string' })
  @Matches(PHONE, { message: 'phone must be 3 to 50 characters of digits, spaces and + ( ) . - / x # *' })
  phone?: string | null;

  @IsOptional()
  @Text(ContactsLimits.title)
  title?: string | null;

  @IsOptional()
  @IsOneOf(CONTACT_STAGES)
  stage?: ContactStage | null;

  @IsOptional()
  @IsOneOf(CONTACT_SOURCES)
  source?: ContactSource | null;

  @IsOptional()
  @Text(ContactsLimits.sourceDetail)
  source_detail?: string | null;

  @CompanyLink()
  company_id?: string | null;

  @OwnerLink()
  owner_id?: string | null;

  @IsOptional()
  @IcpScore()
  icp_score?: number | null;

  @IsOptional()
  @Text(ContactsLimits.icpScoreReason)
  icp_score_reason?: string | null;

  @IsOptional()
  @IsRFC3339({ message: 'icp_scored_at must be an RFC 3339 date-time, e.g. 2030-01-01T00:00:00Z' })
  icp_scored_at?: string | null;

  @MetadataInput()
  metadata?: Record<string, unknown> | null;

  /** Values of the custom fields defined on contacts (POST /objects/contacts/fields); PATCH merges by key. */
  @CustomFieldsInput()
  custom_fields?: Record<string, unknown> | null;
}

export class CreateContactDto extends ContactFieldsDto {
  @IsDefined({ message: 'email is required' })
  @SchemaField({ unique: true })
  @Email()
  email!: string;
}

export class UpdateContactDto extends ContactFieldsDto {
  /** Optional, but never null: a contact always has an email. */
  @IfPresent()
  @SchemaField({ unique: true })
  @Email()
  email?: string;
}

export class ListContactsQuery extends SortablePageQuery {
  @IsOptional()
  @IsOneOf(CONTACT_STAGES)
  stage?: ContactStage;

  @IsOptional()
  @IsOneOf(CONTACT_SOURCES)
  source?: ContactSource;

  @IsOptional()
  @IsIdOf('comp', 'company_id')
  company_id?: string;

  @IsOptional()
  @IsIdOf('user', 'owner_id')
  owner_id?: string;

  @IsOptional()
  @SearchText()
  search?: string;

  @IsOptional()
  @QueryInt()
  @IcpScore()
  icp_score_min?: number;

  @IsOptional()
  @QueryInt()
  @IcpScore()
  icp_score_max?: number;

  @DateTimeFilter()
  icp_scored_after?: string;

  @DateTimeFilter()
  icp_scored_before?: string;

  @DateTimeFilter()
  created_after?: string;

  @DateTimeFilter()
  created_before?: string;
}

export class MergeContactsDto {
  @IsDefined({ message: 'winner_id is required' })
  @IsIdOf('cont', 'winner_id')
  winner_id!: string;

  @IsDefined({ message: 'loser_id is required' })
  @IsIdOf('cont', 'loser_id')
  loser_id!: string;
}

const IdsToResolve = (prefix: string, field: string): PropertyDecorator =>
  Rules(
    IsOptional(),
    IsArray({ message: `${field} must be an array` }),
    ArrayMaxSize(ContactsLimits.resolveIds, { message: `${field} may hold at most ${ContactsLimits.resolveIds} ids` }),
    IsIdOf(prefix, field, { each: true }),
  );

/** Body check of ContactsInternalRpc.Resolve. */
export class ResolveContactsDto {
  @IdsToResolve('cont', 'contact_ids')
  contact_ids?: string[];

  @IdsToResolve('comp', 'company_ids')
  company_ids?: string[];

  @IdsToResolve('user', 'user_ids')
  user_ids?: string[];
}
