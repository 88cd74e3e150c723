import { PageQuery, QueryInt } from '@crm/common';
import { ArrayMaxSize, IsArray, IsDefined, IsEmail, IsIn, IsInt, IsOptional, IsRFC3339, IsString, Matches, Max, MaxLength, Min } from 'class-validator';
import { IfPresent, IsIdOf, Normalise, Trim } from '../dto-helpers';
import { IsMetadata } from '@crm/common';
import { CustomFieldsInput } from '../schema/field-values';
import { SchemaField } from '../schema/schema-field';
import { CONTACT_SOURCES, CONTACT_STAGES, ContactSource, ContactStage, ContactsLimits } from './values';

const PHONE = /^[0-9+().\-\s/xX#*]{3,50}$/;

/** The optional contact fields, shared by create and update; on update `null` clears a field. */
class ContactFieldsDto {
  @IsOptional()
  @IsString({ message: 'first_name must be a string' })
  @MaxLength(ContactsLimits.name, { message: `first_name must be at most ${ContactsLimits.name} characters` })
  first_name?: string | null;

  @IsOptional()
  @IsString({ message: 'last_name must be a string' })
  @MaxLength(ContactsLimits.name, { message: `last_name must be at most ${ContactsLimits.name} characters` })
  last_name?: string | null;

  @IsOptional()
  @SchemaField({ type: 'phone' })
  @IsString({ message: 'phone must be a string' })
  @Matches(PHONE, { message: 'phone must be 3 to 50 characters of digits, spaces and + ( ) . - / x # *' })
  phone?: string | null;

  @IsOptional()
  @IsString({ message: 'title must be a string' })
  @MaxLength(ContactsLimits.title, { message: `title must be at most ${ContactsLimits.title} characters` })
  title?: string | null;

  @IsOptional()
  @IsIn(CONTACT_STAGES, { message: `stage must be one of ${CONTACT_STAGES.join(', ')}` })
  stage?: ContactStage | null;

  @IsOptional()
  @IsIn(CONTACT_SOURCES, { message: `source must be one of ${CONTACT_SOURCES.join(', ')}` })
  source?: ContactSource | null;

  @IsOptional()
  @IsString({ message: 'source_detail must be a string' })
  @MaxLength(ContactsLimits.sourceDetail, { message: `source_detail must be at most ${ContactsLimits.sourceDetail} characters` })
  source_detail?: string | null;

  @IsOptional()
  @SchemaField({ reference_target: 'companies' })
  @IsIdOf('comp', 'company_id')
  company_id?: string | null;

  @IsOptional()
  @SchemaField({ reference_target: 'users' })
  @IsIdOf('user', 'owner_id')
  owner_id?: string | null;

  @IsOptional()
  @IsInt({ message: 'icp_score must be an integer between 0 and 100' })
  @Min(0, { message: 'icp_score must be an integer between 0 and 100' })
  @Max(100, { message: 'icp_score must be an integer between 0 and 100' })
  icp_score?: number | null;

  @IsOptional()
  @IsString({ message: 'icp_score_reason must be a string' })
  @MaxLength(ContactsLimits.icpScoreReason, { message: `icp_score_reason must be at most ${ContactsLimits.icpScoreReason} characters` })
  icp_score_reason?: string | null;

  @IsOptional()
  @IsRFC3339({ message: 'icp_scored_at must be an RFC 3339 date-time, e.g. 2030-01-01T00:00:00Z' })
  icp_scored_at?: string | null;

  @IsOptional()
  @IsMetadata()
  metadata?: Record<string, unknown> | null;

  /** Values of the custom fields defined on contacts (POST /objects/contacts/fields); PATCH merges by key. */
  @CustomFieldsInput()
  custom_fields?: Record<string, unknown> | null;
}

const EMAIL_MESSAGE = 'email must be a valid email address';

export class CreateContactDto extends ContactFieldsDto {
  @IsDefined({ message: 'email is required' })
  @SchemaField({ unique: true })
  @Normalise()
  @IsString({ message: EMAIL_MESSAGE })
  @MaxLength(ContactsLimits.email, { message: `email must be at most ${ContactsLimits.email} characters` })
  @IsEmail({}, { message: EMAIL_MESSAGE })
  email!: string;
}

export class UpdateContactDto extends ContactFieldsDto {
  /** Optional, but never null: a contact always has an email. */
  @IfPresent()
  @SchemaField({ unique: true })
  @Normalise()
  @IsString({ message: EMAIL_MESSAGE })
  @MaxLength(ContactsLimits.email, { message: `email must be at most ${ContactsLimits.email} characters` })
  @IsEmail({}, { message: EMAIL_MESSAGE })
  email?: string;
}

export class ListContactsQuery extends PageQuery {
  @IsOptional()
  @IsIn(CONTACT_STAGES, { message: `stage must be one of ${CONTACT_STAGES.join(', ')}` })
  stage?: ContactStage;

  @IsOptional()
  @IsIn(CONTACT_SOURCES, { message: `source must be one of ${CONTACT_SOURCES.join(', ')}` })
  source?: ContactSource;

  @IsOptional()
  @IsIdOf('comp', 'company_id')
  company_id?: string;

  @IsOptional()
  @IsIdOf('user', 'owner_id')
  owner_id?: string;

  @IsOptional()
  @Trim()
  @IsString({ message: 'search must be a string' })
  @Matches(/^[^\u0000-\u001f]{1,200}$/, { message: `search must be 1 to ${ContactsLimits.search} characters without control characters` })
  search?: string;

  @IsOptional()
  @QueryInt()
  @IsInt({ message: 'icp_score_min must be an integer between 0 and 100' })
  @Min(0, { message: 'icp_score_min must be an integer between 0 and 100' })
  @Max(100, { message: 'icp_score_min must be an integer between 0 and 100' })
  icp_score_min?: number;

  @IsOptional()
  @QueryInt()
  @IsInt({ message: 'icp_score_max must be an integer between 0 and 100' })
  @Min(0, { message: 'icp_score_max must be an integer between 0 and 100' })
  @Max(100, { message: 'icp_score_max must be an integer between 0 and 100' })
  icp_score_max?: number;

  @IsOptional()
  @IsRFC3339({ message: 'icp_scored_after must be an RFC 3339 date-time' })
  icp_scored_after?: string;

  @IsOptional()
  @IsRFC3339({ message: 'icp_scored_before must be an RFC 3339 date-time' })
  icp_scored_before?: string;

  @IsOptional()
  @IsRFC3339({ message: 'created_after must be an RFC 3339 date-time' })
  created_after?: string;

  @IsOptional()
  @IsRFC3339({ message: 'created_before must be an RFC 3339 date-time' })
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

/** Body check of ContactsInternalRpc.Resolve. */
export class ResolveContactsDto {
  @IsOptional()
  @IsArray({ message: 'contact_ids must be an array' })
  @ArrayMaxSize(ContactsLimits.resolveIds, { message: `contact_ids may hold at most ${ContactsLimits.resolveIds} ids` })
  @IsIdOf('cont', 'contact_ids', { each: true })
  contact_ids?: string[];

  @IsOptional()
  @IsArray({ message: 'company_ids must be an array' })
  @ArrayMaxSize(ContactsLimits.resolveIds, { message: `company_ids may hold at most ${ContactsLimits.resolveIds} ids` })
  @IsIdOf('comp', 'company_ids', { each: true })
  company_ids?: string[];

  @IsOptional()
  @IsArray({ message: 'user_ids must be an array' })
  @ArrayMaxSize(ContactsLimits.resolveIds, { message: `user_ids may hold at most ${ContactsLimits.resolveIds} ids` })
  @IsIdOf('user', 'user_ids', { each: true })
  user_ids?: string[];
}
