import { ApiProperty } from '@nestjs/swagger';
import { IsDefined, IsOptional } from 'class-validator';
import { IfPresent, IsOneOf, NonEmptyText, Normalise, Text, Trim } from '../dto-helpers';
import { SortablePageQuery } from '../paging';
import { Email } from './rules';
import { ContactsLimits } from './values';

/** Roles of team members. Roles are labels for now: API keys, not users, carry permissions (scopes). */
export const USER_ROLES = ['admin', 'manager', 'member'] as const;
export type UserRole = (typeof USER_ROLES)[number];

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
}

export class ListUsersQuery extends SortablePageQuery {
  @IsOptional()
  @Normalise()
  @Text(ContactsLimits.email)
  email?: string;
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
  @ApiProperty({ type: String, format: 'date-time' })
  created_at!: string;
  @ApiProperty({ type: String, format: 'date-time' })
  updated_at!: string;
}
