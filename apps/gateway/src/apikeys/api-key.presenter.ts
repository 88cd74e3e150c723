import { API_SCOPES, NAMED_ONLY_RESOURCES, permissionProblem, SCOPE_PERMISSIONS } from '@crm/contracts';
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

/**
 * What the operator adds to the `read-write` scope (docs/privacy.md, "Who may erase"): permissions `*`
 * does not stand for, such as `privacy:delete`, listed in CRM_READ_WRITE_ALSO_GRANTS (comma-separated).
 * Only named-only resources may be listed; anything else is ignored.
 */
export function readWriteAlsoGrants(value: string | undefined): string[] {
  return (value ?? '')
    .split(',')
    .map((p) => p.trim())
    .filter((p) => NAMED_ONLY_RESOURCES.includes(p.split(':')[0]) && permissionProblem(p) === undefined);
}

/** A key's permissions: its own, or its named scope's set (`read-write` with what the operator adds). */
export function permissionsOf(key: Pick<ApiKey, 'scope' | 'scopes'>): string[] {
  if (key.scope === 'custom') return key.scopes ?? [];
  return key.scope === 'read-write'
    ? [...SCOPE_PERMISSIONS[key.scope], ...readWriteAlsoGrants(process.env.CRM_READ_WRITE_ALSO_GRANTS)]
    : [...SCOPE_PERMISSIONS[key.scope]];
}
