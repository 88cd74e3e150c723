import type { UserRole } from '@crm/contracts';
import { NOW_MS } from '../shared/sql';
import { Column, Entity, PrimaryColumn } from 'typeorm';

/** A team member: owns contacts and deals, and may hold API keys. */
@Entity({ name: 'users' })
export class User {
  @PrimaryColumn({ type: 'text' })
  id!: string;

  @Column({ type: 'text' })
  name!: string;

  /** Stored lowercased; unique through an index on lower(email). */
  @Column({ type: 'text' })
  email!: string;

  @Column({ type: 'text' })
  role!: UserRole;

  @Column({ name: 'created_at', type: 'timestamptz', default: () => NOW_MS })
  createdAt!: Date;

  @Column({ name: 'updated_at', type: 'timestamptz', default: () => NOW_MS })
  updatedAt!: Date;
}
