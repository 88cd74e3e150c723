import { fieldView, ObjectRecordView, ObjectSchemaView } from '@crm/contracts';
import { ObjectRecord, ObjectType } from './object-type.entity';

export function presentObjectType(type: ObjectType): ObjectSchemaView {
  return {
    id: type.id,
    name: type.name,
    slug: type.slug,
    kind: 'custom',
    status: type.status,
    enforcement_level: type.enforcementLevel,
    accepts_custom_fields: true,
    fields: type.fields.map((f) => fieldView(f, false)),
    created_at: type.createdAt.toISOString(),
    updated_at: type.updatedAt.toISOString(),
  };
}

export function presentRecord(record: ObjectRecord, type: ObjectType): ObjectRecordView {
  return {
    id: record.id,
    object: type.slug,
    object_type_id: type.id,
    values: record.values ?? {},
    created_at: record.createdAt.toISOString(),
    updated_at: record.updatedAt.toISOString(),
  };
}
