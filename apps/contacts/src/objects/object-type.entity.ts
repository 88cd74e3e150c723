import type { CustomFieldDefinition, EnforcementLevel, ObjectTypeStatus } from '@crm/contracts';
import { Column, Entity, PrimaryColumn } from 'typeorm';
import { NOW_MS } from '../shared/sql';

@Entity({ name: 'object_types' })
export class ObjectType {
  @PrimaryColumn({ type: 'text' })
  id!: string;

  @Column({ type: 'text' })
  slug!: string;

  @Column({ type: 'text' })
  name!: string;

  @Column({ name: 'enforcement_level', type: 'text' })
  enforcementLevel!: EnforcementLevel;

  @Column({ type: 'text', default: 'active' })
  status!: ObjectTypeStatus;

  @Column({ type: 'jsonb', default: () => `'[]'::jsonb` })
  fields!: CustomFieldDefinition[];

  @Column({ name: 'created_at', type: 'timestamptz', default: () => NOW_MS })
  createdAt!: Date;

  @Column({ name: 'updated_at', type: 'timestamptz', default: () => NOW_MS })
  updatedAt!: Date;
}

@Entity({ name: 'object_records' })
export class ObjectRecord {
  @PrimaryColumn({ type: 'text' })
  id!: string;

  @Column({ name: 'object_type_id', type: 'text' })
  objectTypeId!: string;

  @Column({ type: 'jsonb', default: () => `'{}'::jsonb` })
  values!: Record<string, unknown>;

  @Column({ name: 'created_at', type: 'timestamptz', default: () => NOW_MS })
  createdAt!: Date;

  @Column({ name: 'updated_at', type: 'timestamptz', default: () => NOW_MS })
  updatedAt!: Date;
}
