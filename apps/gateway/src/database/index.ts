import {
  AddOutboxPublished1766000000000,
  AddOutboxTraceContext1764200000000,
  CreateOutbox1763800000000,
  IndexOutboxPublished1766000000100,
} from '@crm/messaging';
import { ApiKey } from '../apikeys/api-key.entity';
import { CreateApiKeys1763800000100 } from './migrations/1763800000100-create-api-keys';
import { CreateIdempotencyKeys1763800000200 } from './migrations/1763800000200-create-idempotency-keys';
import { ApiKeyUsers1763800000300 } from './migrations/1763800000300-api-key-users';
import { ApiKeyScopes1765000000000 } from './migrations/1765000000000-api-key-scopes';

export const GATEWAY_SCHEMA = 'gateway';
export const gatewayEntities = [ApiKey];
export const gatewayMigrations = [
  CreateOutbox1763800000000,
  CreateApiKeys1763800000100,
  CreateIdempotencyKeys1763800000200,
  ApiKeyUsers1763800000300,
  AddOutboxTraceContext1764200000000,
  ApiKeyScopes1765000000000,
  AddOutboxPublished1766000000000,
  IndexOutboxPublished1766000000100,
];
