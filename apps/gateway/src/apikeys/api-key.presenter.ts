import { API_SCOPES, SCOPE_PERMISSIONS } from '@crm/contracts';
import { ApiProperty } from '@nestjs/swagger';
import { ApiKey } from './api-key.entity';

export class ApiKeyView {
  @ApiProperty({ type: String })
  id!: string;
  @ApiProperty({ type: String })
  name!: string;
  @ApiProperty({ enum: [...API_SCOPES, 'custom'], description: '`custom` for a key made with `scopes`.' })
  scope!: string;
  @ApiProperty({ type: [String], description: 'What the key may do: `<resource>:<action>` permissions (a named scope as its set).' })
  scopes!: string[];
  @ApiProperty({ type: String, description: 'The last four characters of the key, to tell keys apart.' })
  last4!: string;
  @ApiProperty({ type: String, nullable: true })
  user_id!: string | null;
  @ApiProperty({ type: String, format: 'date-time', nullable: true })
  expires_at!: string | null;
  @ApiProperty({ type: String, format: 'date-time', nullable: true })
  last_used_at!: string | null;
  @ApiProperty({ type: String, format: 'date-time' })
  created_at!: string;
}

/** The answer to POST /apikeys: the only time the full key is shown. */
export class CreatedApiKeyView extends ApiKeyView {
  @ApiProperty({ type: String, description: 'The full key. Store it now: it is never shown again.' })
  key!: string;
}

export function presentApiKey(key: ApiKey): ApiKeyView {
  return {
    id: key.id,
    name: key.name,
    scope: key.scope,
    scopes: permissionsOf(key),
    last4: key.last4,
    user_id: key.userId ?? null,
    expires_at: key.expiresAt?.toISOString() ?? null,
    last_used_at: key.lastUsedAt?.toISOString() ?? null,
    created_at: key.createdAt.toISOString(),
  };
}

/** A key's permissions: its own, or its named scope's set. */
export function permissionsOf(key: Pick<ApiKey, 'scope' | 'scopes'>): string[] {
  return key.scope === 'custom' ? (key.scopes ?? []) : [...SCOPE_PERMISSIONS[key.scope]];
}
