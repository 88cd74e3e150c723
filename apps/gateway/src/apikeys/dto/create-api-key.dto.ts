import { API_SCOPES, ApiScope, MAX_PERMISSIONS } from '@crm/contracts';
import { ArrayMaxSize, ArrayMinSize, IsArray, IsDefined, IsIn, IsOptional, IsRFC3339, IsString, Length, Matches, ValidateIf } from 'class-validator';

export class CreateApiKeyDto {
  @IsDefined({ message: 'name is required' })
  @IsString({ message: 'name must be a string' })
  @Length(1, 100, { message: 'name must be 1 to 100 characters' })
  name!: string;

  /** One of `scope` and `scopes` is required (the service refuses both or neither). */
  @ValidateIf((o: CreateApiKeyDto) => o.scope !== undefined || o.scopes === undefined)
  @IsDefined({ message: 'scope or scopes is required' })
  @IsIn(API_SCOPES, { message: `scope must be one of ${API_SCOPES.join(', ')}` })
  scope?: ApiScope;

  /** `<resource>:<action>` permissions (docs/api.md); each is checked by permissionProblem. */
  @ValidateIf((o: CreateApiKeyDto) => o.scopes !== undefined)
  @IsArray({ message: 'scopes must be an array of <resource>:<action> permissions' })
  @ArrayMinSize(1, { message: 'scopes must name at least one permission' })
  @ArrayMaxSize(MAX_PERMISSIONS, { message: `scopes may name at most ${MAX_PERMISSIONS} permissions` })
  @IsString({ each: true, message: 'each of scopes must be a string' })
  @Length(3, 100, { each: true, message: 'each of scopes must be 3 to 100 characters' })
  scopes?: string[];

  @IsOptional()
  @IsRFC3339({ message: 'expires_at must be an RFC 3339 date-time, e.g. 2030-01-01T00:00:00Z' })
  expires_at?: string;

  /** The team member the key acts for: stage history names this user as changed_by. */
  @IsOptional()
  @IsString({ message: 'user_id must be a user_ identifier' })
  @Matches(/^user_[0-9a-hjkmnp-tv-z]{26}$/, { message: 'user_id must be a user_ identifier' })
  user_id?: string;
}
