import type { RelatedSummary, UserView } from '@crm/contracts';
import { User } from './user.entity';

export function presentUser(user: User): UserView {
  return {
    id: user.id,
    name: user.name,
    email: user.email,
    role: user.role,
    external_id: user.externalId ?? null,
    created_at: user.createdAt.toISOString(),
    updated_at: user.updatedAt.toISOString(),
  };
}

/**
 * How a record names its owner. An owner that was deleted after the record was assigned keeps its id
 * and has an empty name.
 */
export function ownerSummary(ownerId: string | null, owner: Pick<User, 'id' | 'name'> | null): RelatedSummary | null {
  if (!ownerId) return null;
  return { type: 'user', id: ownerId, name: owner && owner.id === ownerId ? owner.name : '' };
}
