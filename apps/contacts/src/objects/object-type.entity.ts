import type { CustomFieldDefinition, EnforcementLevel, ObjectTypeStatus } from '@crm/contracts';
import { Column, Entity, PrimaryColumn } from 'typeorm';
import { Timestamped } from '@crm/records';

@Entity({ name: 'object_types' })
export class ObjectType extends Timestamped {
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
}

@Entity({ name: 'object_records' })
export class ObjectRecord extends Timestamped {
  @PrimaryColumn({ type: 'text' })
  id!: string;

  @Column({ name: 'object_type_id', type: 'text' })
  objectTypeId!: string;

  @Column({ type: 'jsonb', default: () => `'{}'::jsonb` })
  values!: Record<string, unknown>;
}
