import { ApiKey } from './api-key.entity';

export interface ApiKeyView {
  id: string;
  name: string;
  scope: string;
  last4: string;
  user_id: string | null;
  expires_at: string | null;
  last_used_at: string | null;
  created_at: string;
}

export function presentApiKey(key: ApiKey): ApiKeyView {
  return {
    id: key.id,
    name: key.name,
    scope: key.scope,
    last4: key.last4,
    user_id: key.userId ?? null,
    expires_at: key.expiresAt?.toISOString() ?? null,
    last_used_at: key.lastUsedAt?.toISOString() ?? null,
    created_at: key.createdAt.toISOString(),
  };
}
