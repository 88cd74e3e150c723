import type { ApiScope } from '@crm/contracts';
import { Column, Entity, PrimaryColumn } from 'typeorm';

/** An API key. Only a SHA-256 digest of the secret is stored; the secret is shown once, at creation. */
@Entity({ name: 'api_keys' })
export class ApiKey {
  @PrimaryColumn({ type: 'text' })
  id!: string;

  @Column({ type: 'text' })
  name!: string;

  @Column({ type: 'text' })
  scope!: ApiScope | 'custom';

  /** A `custom` key's permissions; null for a named scope, whose set is SCOPE_PERMISSIONS. */
  @Column({ type: 'text', array: true, nullable: true })
  scopes!: string[] | null;

  @Column({ name: 'key_hash', type: 'text', unique: true })
  keyHash!: string;

  @Column({ type: 'text' })
  last4!: string;

  @Column({ type: 'text' })
  environment!: 'live' | 'test';

  /** The team member the key acts for (a `user_` id), or null for a key of its own. */
  @Column({ name: 'user_id', type: 'text', nullable: true })
  userId!: string | null;

  @Column({ name: 'expires_at', type: 'timestamptz', nullable: true })
  expiresAt!: Date | null;

  @Column({ name: 'revoked_at', type: 'timestamptz', nullable: true })
  revokedAt!: Date | null;

  @Column({ name: 'last_used_at', type: 'timestamptz', nullable: true })
  lastUsedAt!: Date | null;

  @Column({ name: 'created_at', type: 'timestamptz', default: () => 'now()' })
  createdAt!: Date;
}
