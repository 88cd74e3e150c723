import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsBoolean, IsDefined, IsEmail, IsIn, IsOptional, IsString, Matches, MaxLength, ValidateNested } from 'class-validator';

/** Who to erase: a contact by id, or whoever holds an email address (docs/privacy.md). */
export class ErasureSubjectDto {
  @ApiPropertyOptional({ enum: ['contacts'], description: 'With `id`: the object the subject is a record of.' })
  @IsOptional()
  @IsIn(['contacts'])
  object?: 'contacts';

  @ApiPropertyOptional({ type: String, description: 'With `object`: the contact id.' })
  @IsOptional()
  @Matches(/^cont_[0-9A-Za-z]{1,64}$/, { message: 'id must be a contact id (cont_…)' })
  id?: string;

  @ApiPropertyOptional({ type: String, description: 'Instead of `object` and `id`: the email address.' })
  @IsOptional()
  @IsEmail()
  @MaxLength(320)
  email?: string;
}

export class CreateErasureDto {
  @ApiProperty({ type: () => ErasureSubjectDto })
  @IsDefined()
  @ValidateNested()
  @Type(() => ErasureSubjectDto)
  subject!: ErasureSubjectDto;

  @ApiPropertyOptional({ type: String, maxLength: 500, description: 'Why (kept with the erasure; write no personal data here).' })
  @IsOptional()
  @IsString()
  @MaxLength(500)
  reason?: string;

  @ApiPropertyOptional({ type: Boolean, description: 'Keep a keyed hash of the email so it cannot be created again.' })
  @IsOptional()
  @IsBoolean()
  suppress?: boolean;
}

export const ERASURE_STATUSES = ['pending', 'running', 'completed', 'failed'] as const;
export type ErasureStatus = (typeof ERASURE_STATUSES)[number];

/** What one store did: rows or messages deleted and redacted in place. */
export class ErasureStoreCount {
  @ApiProperty({ type: String, description: '`<service>.<store>`, e.g. `events.log` or `contacts.changes`.' })
  store!: string;
  @ApiProperty({ type: Number })
  deleted!: number;
  @ApiProperty({ type: Number })
  redacted!: number;
}

/** An inclusive range of event-log positions (or stream sequences) the erasure touched. */
export class SequenceRange {
  @ApiProperty({ type: String })
  from!: string;
  @ApiProperty({ type: String })
  to!: string;
}

export class ErasureReceipt {
  @ApiProperty({ type: String, description: 'The contact id erased (null when the email named no contact).', nullable: true })
  subject_id!: string | null;
  @ApiProperty({ type: String, description: 'HMAC-SHA-256 of the lower-cased email under the deployment key, hex.', nullable: true })
  email_hmac!: string | null;
  @ApiProperty({ type: () => [ErasureStoreCount] })
  stores!: ErasureStoreCount[];
  @ApiProperty({ type: () => [SequenceRange], description: 'Event-log positions redacted in place.' })
  event_log_ranges!: SequenceRange[];
  @ApiProperty({ type: () => [SequenceRange], description: 'JetStream stream sequences removed.' })
  stream_ranges!: SequenceRange[];
  @ApiProperty({ type: String, format: 'date-time' })
  completed_at!: string;
}

export class ErasureView {
  @ApiProperty({ type: String })
  id!: string;
  @ApiProperty({ enum: ERASURE_STATUSES })
  status!: ErasureStatus;
  @ApiProperty({ type: String, nullable: true, description: 'The contact id, or null for an email that names none.' })
  subject_id!: string | null;
  @ApiProperty({ type: String, nullable: true })
  email_hmac!: string | null;
  @ApiProperty({ type: String, nullable: true })
  reason!: string | null;
  @ApiProperty({ type: Boolean })
  suppress!: boolean;
  @ApiProperty({ type: String, nullable: true, description: 'The step being run or last run.' })
  step!: string | null;
  @ApiProperty({ type: String, nullable: true, description: 'Why it failed, when `failed`.' })
  error!: string | null;
  @ApiProperty({ type: () => ErasureReceipt, nullable: true, description: 'When `completed`.' })
  receipt!: ErasureReceipt | null;
  @ApiProperty({ type: String, format: 'date-time' })
  created_at!: string;
  @ApiProperty({ type: String, format: 'date-time' })
  updated_at!: string;
}

/** `privacy.erased`: the subject's id and the erasure's, nothing else. */
export class PrivacyErasedData {
  @ApiProperty({ type: String, nullable: true })
  contact_id!: string | null;
  @ApiProperty({ type: String })
  erasure_id!: string;
}

/**
 * What a service is asked to erase (Ops.*Internal privacy steps): the contact's id and the values that
 * identify the person, which each store removes from its text. Sent over NATS only, never stored.
 */
export interface ErasureTarget {
  erasure_id: string;
  contact_id: string | null;
  /** Email, phone, full name, surname: replaced wherever they appear in another record's text. */
  needles: string[];
}

/** What one service's privacy step did. */
export interface ErasureStepReply {
  stores: ErasureStoreCount[];
  event_log_ranges?: SequenceRange[];
  stream_ranges?: SequenceRange[];
}
