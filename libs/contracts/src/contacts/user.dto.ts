import { ApiProperty } from '@nestjs/swagger';
import { IsDefined, IsOptional } from 'class-validator';
import { IfPresent, IsOneOf, NonEmptyText, Normalise, Text, Trim } from '../dto-helpers';
import { SortablePageQuery } from '../paging';
import { Email } from './rules';
import { ContactsLimits } from './values';

/** Roles of team members. Roles are labels for now: API keys, not users, carry permissions (scopes). */
export const USER_ROLES = ['admin', 'manager', 'member'] as const;
export type UserRole = (typeof USER_ROLES)[number];

export const EXTERNAL_ID_MAX = 255;

/** The team member's id at the deployment's identity provider: a bearer token's `sub` (docs/users.md). Kept as given, case and all. */
const ExternalId = (): PropertyDecorator => NonEmptyText(EXTERNAL_ID_MAX);

/** Body of Ops.contactsInternal.userForSubject. */
export class UserForSubjectDto {
  @IsDefined({ message: 'external_id is required' })
  @ExternalId()
  external_id!: string;
}

export interface UserForSubjectReply {
  user_id: string | null;
}

export class CreateUserDto {
  @IsDefined({ message: 'name is required' })
  @Trim()
  @NonEmptyText(ContactsLimits.name)
  name!: string;

  @IsDefined({ message: 'email is required' })
  @Email()
  email!: string;

  @IsOptional()
  @IsOneOf(USER_ROLES)
  role?: UserRole;

  @IsOptional()
  @ExternalId()
  external_id?: string | null;
}

export class UpdateUserDto {
  @IfPresent()
  @Trim()
  @NonEmptyText(ContactsLimits.name)
  name?: string;

  @IfPresent()
  @Email()
  email?: string;

  @IfPresent()
  @IsOneOf(USER_ROLES)
  role?: UserRole;

  /** `null` clears it. */
  @IsOptional()
  @ExternalId()
  external_id?: string | null;
}

export class ListUsersQuery extends SortablePageQuery {
  @IsOptional()
  @Normalise()
  @Text(ContactsLimits.email)
  email?: string;

  @IsOptional()
  @ExternalId()
  external_id?: string;
}

export class UserView {
  @ApiProperty({ type: String })
  id!: string;
  @ApiProperty({ type: String })
  name!: string;
  @ApiProperty({ type: String })
  email!: string;
  @ApiProperty({ enum: USER_ROLES })
  role!: UserRole;
  @ApiProperty({
    type: String,
    nullable: true,
    maxLength: EXTERNAL_ID_MAX,
    description: "The member's subject at the identity provider: a bearer token whose `sub` equals it acts as this member",
  })
  external_id!: string | null;
  @ApiProperty({ type: String, format: 'date-time' })
  created_at!: string;
  @ApiProperty({ type: String, format: 'date-time' })
  updated_at!: string;
}
