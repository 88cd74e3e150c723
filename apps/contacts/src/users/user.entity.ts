import type { UserRole } from '@crm/contracts';
import { Timestamped } from '@crm/records';
import { Column, Entity, PrimaryColumn } from 'typeorm';

/** A team member: owns contacts and deals, and may hold API keys. */
@Entity({ name: 'users' })
export class User extends Timestamped {
  @PrimaryColumn({ type: 'text' })
  id!: string;

  @Column({ type: 'text' })
  name!: string;

  /** Stored lowercased; unique through an index on lower(email). */
  @Column({ type: 'text' })
  email!: string;

  @Column({ type: 'text' })
  role!: UserRole;

  /** The member's subject at the identity provider; unique where set (users_external_id_key). */
  @Column({ name: 'external_id', type: 'text', nullable: true })
  externalId!: string | null;
}
