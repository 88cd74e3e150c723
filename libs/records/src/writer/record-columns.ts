import { fieldSpecs } from '@crm/common';
import { Column } from 'typeorm';
import { NOW_MS } from './sql';

/** Rows stamped at millisecond precision when written (see NOW_MS). */
export abstract class Timestamped {
  @Column({ name: 'created_at', type: 'timestamptz', default: () => NOW_MS })
  createdAt!: Date;

  @Column({ name: 'updated_at', type: 'timestamptz', default: () => NOW_MS })
  updatedAt!: Date;
}

/** A record of a built-in object: besides its own fields it keeps free-form metadata and custom field values. */
export abstract class BuiltInRecord extends Timestamped {
  @Column({ type: 'jsonb', default: () => `'{}'::jsonb` })
  metadata!: Record<string, unknown>;

  /** Values of the custom fields defined for this object (see docs/schema.md). */
  @Column({ name: 'custom_fields', type: 'jsonb', default: () => `'{}'::jsonb` })
  customFields!: Record<string, unknown>;
}

/** How a PATCH reaches the columns every built-in record has; they come last in each object's field list. */
export const BUILT_IN_RECORD_FIELDS = fieldSpecs<BuiltInRecord>({ metadata: 'json', custom_fields: 'json' });
