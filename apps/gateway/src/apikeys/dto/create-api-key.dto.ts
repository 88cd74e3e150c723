import { API_SCOPES, ApiScope } from '@crm/contracts';
import { IsDefined, IsIn, IsOptional, IsRFC3339, IsString, Length, Matches } from 'class-validator';

export class CreateApiKeyDto {
  @IsDefined({ message: 'name is required' })
  @IsString({ message: 'name must be a string' })
  @Length(1, 100, { message: 'name must be 1 to 100 characters' })
  name!: string;

  @IsDefined({ message: 'scope is required' })
  @IsIn(API_SCOPES, { message: `scope must be one of ${API_SCOPES.join(', ')}` })
  scope!: ApiScope;

  @IsOptional()
  @IsRFC3339({ message: 'expires_at must be an RFC 3339 date-time, e.g. 2030-01-01T00:00:00Z' })
  expires_at?: string;

  /** The team member the key acts for: stage history names this user as changed_by. */
  @IsOptional()
  @IsString({ message: 'user_id must be a user_ identifier' })
  @Matches(/^user_[0-9a-hjkmnp-tv-z]{26}$/, { message: 'user_id must be a user_ identifier' })
  user_id?: string;
}
