import type { CustomFieldDefinition, EnforcementLevel } from '@crm/contracts';
import { Column, Entity, PrimaryColumn } from 'typeorm';

/** Custom fields of one built-in object, in the schema of the service that owns the object's records. */
@Entity({ name: 'built_in_custom_fields' })
export class BuiltInCustomFields {
  @PrimaryColumn({ name: 'object_slug', type: 'text' })
  objectSlug!: string;

  @Column({ type: 'jsonb', default: () => `'[]'::jsonb` })
  fields!: CustomFieldDefinition[];

  @Column({ name: 'enforcement_level', type: 'text', default: 'hard' })
  enforcementLevel!: EnforcementLevel;

  @Column({ name: 'updated_at', type: 'timestamptz', default: () => `date_trunc('milliseconds', now())` })
  updatedAt!: Date;
}
