import { ApiProperty } from '@nestjs/swagger';
import { IsMetadata } from '@crm/common';
import { IsDefined, IsEmail, IsIn, IsOptional, IsString, MaxLength } from 'class-validator';
import { Normalise, Trim } from '../dto-helpers';
import { CONTACT_SOURCES, ContactSource, ContactsLimits } from './values';

const EMAIL_MESSAGE = 'email must be a valid email address';

/** Body of POST /capture: what a website form knows about a person. `null` counts as not given. */
export class CaptureContactDto {
  @IsDefined({ message: 'email is required' })
  @Normalise()
  @IsString({ message: EMAIL_MESSAGE })
  @MaxLength(ContactsLimits.email, { message: `email must be at most ${ContactsLimits.email} characters` })
  @IsEmail({}, { message: EMAIL_MESSAGE })
  email!: string;

  @IsOptional()
  @Trim()
  @IsString({ message: 'first_name must be a string' })
  @MaxLength(ContactsLimits.name, { message: `first_name must be at most ${ContactsLimits.name} characters` })
  first_name?: string | null;

  @IsOptional()
  @Trim()
  @IsString({ message: 'last_name must be a string' })
  @MaxLength(ContactsLimits.name, { message: `last_name must be at most ${ContactsLimits.name} characters` })
  last_name?: string | null;

  @IsOptional()
  @IsIn(CONTACT_SOURCES, { message: `source must be one of ${CONTACT_SOURCES.join(', ')}` })
  source?: ContactSource | null;

  @IsOptional()
  @Trim()
  @IsString({ message: 'source_detail must be a string' })
  @MaxLength(ContactsLimits.sourceDetail, { message: `source_detail must be at most ${ContactsLimits.sourceDetail} characters` })
  source_detail?: string | null;

  @IsOptional()
  @IsMetadata()
  metadata?: Record<string, unknown> | null;
}

/** Answer of POST /capture (202). */
export class CaptureView {
  @ApiProperty({ type: String })
  contact_id!: string;
  @ApiProperty({ type: Boolean })
  created!: boolean;
}
