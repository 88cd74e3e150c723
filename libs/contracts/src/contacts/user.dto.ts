import { ApiProperty } from '@nestjs/swagger';
import { PageQuery } from '@crm/common';
import { IsDefined, IsEmail, IsIn, IsOptional, IsString, Length, MaxLength } from 'class-validator';
import { IfPresent, Normalise, Trim } from '../dto-helpers';
import { ContactsLimits } from './values';

/** Roles of team members. Roles are labels for now: API keys, not users, carry permissions (scopes). */
export const USER_ROLES = ['admin', 'manager', 'member'] as const;
export type UserRole = (typeof USER_ROLES)[number];

export class CreateUserDto {
  @IsDefined({ message: 'name is required' })
  @Trim()
  @IsString({ message: 'name must be a string' })
  @Length(1, ContactsLimits.name, { message: `name must be 1 to ${ContactsLimits.name} characters` })
  name!: string;

  @IsDefined({ message: 'email is required' })
  @Normalise()
  @IsString({ message: 'email must be a valid email address' })
  @MaxLength(ContactsLimits.email, { message: `email must be at most ${ContactsLimits.email} characters` })
  @IsEmail({}, { message: 'email must be a valid email address' })
  email!: string;

  @IsOptional()
  @IsIn(USER_ROLES, { message: `role must be one of ${USER_ROLES.join(', ')}` })
  role?: UserRole;
}

export class UpdateUserDto {
  @IfPresent()
  @Trim()
  @IsString({ message: 'name must be a string' })
  @Length(1, ContactsLimits.name, { message: `name must be 1 to ${ContactsLimits.name} characters` })
  name?: string;

  @IfPresent()
  @Normalise()
  @IsString({ message: 'email must be a valid email address' })
  @MaxLength(ContactsLimits.email, { message: `email must be at most ${ContactsLimits.email} characters` })
  @IsEmail({}, { message: 'email must be a valid email address' })
  email?: string;

  @IfPresent()
  @IsIn(USER_ROLES, { message: `role must be one of ${USER_ROLES.join(', ')}` })
  role?: UserRole;
}

export class ListUsersQuery extends PageQuery {
  @IsOptional()
  @Normalise()
  @IsString({ message: 'email must be a string' })
  @MaxLength(ContactsLimits.email, { message: `email must be at most ${ContactsLimits.email} characters` })
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
