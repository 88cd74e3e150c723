import { ApiProperty } from '@nestjs/swagger';
import { IsDefined, IsOptional } from 'class-validator';
import { IsOneOf, MetadataInput, Text, Trim } from '../dto-helpers';
import { Email } from './rules';
import { CONTACT_SOURCES, ContactSource, ContactsLimits } from './values';

/** Body of POST /capture: what a website form knows about a person. `null` counts as not given. */
export class CaptureContactDto {
  @IsDefined({ message: 'email is required' })
  @Email()
  email!: string;

  @IsOptional()
  @Trim()
  @Text(ContactsLimits.name)
  first_name?: string | null;

  @IsOptional()
  @Trim()
  @Text(ContactsLimits.name)
  last_name?: string | null;

  @IsOptional()
  @IsOneOf(CONTACT_SOURCES)
  source?: ContactSource | null;

  @IsOptional()
  @Trim()
  @Text(ContactsLimits.sourceDetail)
  source_detail?: string | null;

  @MetadataInput()
  metadata?: Record<string, unknown> | null;
}

/** Answer of POST /capture (202). */
export class CaptureView {
  @ApiProperty({ type: String })
  contact_id!: string;
  @ApiProperty({ type: Boolean })
  created!: boolean;
}
